import type { H3Event } from 'h3';
import type { AccountService } from '../accounts/accountService';
import type { DatabaseCircuit } from '../platform/databaseCircuit';
import type { Logger } from '../platform/logger';
import type { RateLimiter } from '../platform/rateLimit';
import type { UploadSlots } from '../platform/uploadSlots';
import type { AttachmentService } from './attachmentService';
import type { BranchService } from './branchService';
import type { FeedbackService } from './feedbackService';
import type { ShareService } from './shareService';
import type { ThreadEvents } from './threadEvents';
import type { ThreadService } from './threadService';
import type { ApprovalService } from './turns/approvals';
import type { TurnStreams } from './turns/attach';
import type { InterruptService } from './turns/interrupts';
import type { QueueService } from './turns/queue';

/** Who may send what, as the HTTP layer enforces it (from the config). */
export interface HttpPolicy {
  /** Origins whose pages may send unsafe requests (`platform/config.ts: trustedOrigins`). */
  trustedOrigins: string[];
  /** Peers whose X-Forwarded-For is believed. */
  trustedProxies: ReadonlySet<string>;
  limits: RateLimiter;
  /** Open while the database cannot be reached: requests are answered `503` at once. */
  database: DatabaseCircuit;
  /** How many image uploads are read at once, per account and in all. */
  uploads: UploadSlots;
}

/** What the routes may call: the chat domain's services, nothing lower (no database, no signals). */
export interface ChatServices {
  /** better-auth's `/api/auth/**` in the contract's terms (`auth/authHandler.ts`). */
  authRequests: (event: H3Event) => Promise<Response>;
  accounts: AccountService;
  logger: Logger;
  http: HttpPolicy;
  /** Resolves when the database answers; `503 unavailable` otherwise (`GET /api/ready`). */
  ready: () => Promise<void>;
  threads: ThreadService;
  events: ThreadEvents;
  queue: QueueService;
  interrupts: InterruptService;
  streams: TurnStreams;
  branches: BranchService;
  shares: ShareService;
  feedback: FeedbackService;
  approvals: ApprovalService;
  attachments: AttachmentService;
}
