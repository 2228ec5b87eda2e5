import type { Auth } from '../auth/auth';
import type { Logger } from '../platform/logger';
import type { BranchService } from './branchService';
import type { FeedbackService } from './feedbackService';
import type { ShareService } from './shareService';
import type { ThreadEvents } from './threadEvents';
import type { ThreadService } from './threadService';
import type { TurnStreams } from './turns/attach';
import type { InterruptService } from './turns/interrupts';
import type { QueueService } from './turns/queue';

/** What the routes may call: the chat domain's services, nothing lower (no database, no signals). */
export interface ChatServices {
  auth: Auth;
  logger: Logger;
  threads: ThreadService;
  events: ThreadEvents;
  queue: QueueService;
  interrupts: InterruptService;
  streams: TurnStreams;
  branches: BranchService;
  shares: ShareService;
  feedback: FeedbackService;
}
