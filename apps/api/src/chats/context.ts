import type { Database } from '@chat/db';
import type { Auth } from '../auth/auth';
import type { Logger } from '../platform/logger';
import type { Signals } from '../platform/notifications';
import type { BranchService } from './branches/branchService';
import type { ThreadService } from './threads/threadService';
import type { TurnService } from './turns/turnService';

/** What the routes may call: the chat domain's services, nothing lower. */
export interface ChatServices {
  db: Database;
  auth: Auth;
  threads: ThreadService;
  turns: TurnService;
  branches: BranchService;
  signals: Signals;
  logger: Logger;
}
