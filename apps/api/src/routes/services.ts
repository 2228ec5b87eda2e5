import type { H3Event } from 'h3';
import type { AccountService } from '../accounts/accountService';
import type { AttachmentService } from '../chats/attachmentService';
import type { BranchService } from '../chats/branchService';
import type { ContextService } from '../chats/contextService';
import type { FeedbackService } from '../chats/feedbackService';
import type { PortabilityService } from '../chats/portabilityService';
import type { SettingsService } from '../chats/settingsService';
import type { ShareService } from '../chats/shareService';
import type { ThreadEvents } from '../chats/threadEvents';
import type { ThreadService } from '../chats/threadService';
import type { TurnAcceptance } from '../chats/turns/accepting/turnAcceptance';
import type { ApprovalService } from '../chats/turns/approval/approvalService';
import type { HeadClaims } from '../chats/turns/claim/headClaim';
import type { InterruptService } from '../chats/turns/interrupt/interruptService';
import type { QueueService } from '../chats/turns/queue/queueService';
import type { TurnStreams } from '../chats/turns/stream/attach';
import type { DatabaseCircuit } from '../platform/databaseCircuit';
import type { Logger } from '../platform/logger';
import type { RateLimiter } from '../platform/rateLimit';
import type { StartSlots } from '../platform/startSlots';
import type { UploadSlots } from '../platform/uploadSlots';

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
  /** How many requests that start a turn are handled at once; past it, `503 overloaded`. */
  starts: StartSlots;
}

/**
 * What the routes may call: the domain's services (chats and accounts) and the HTTP policy, nothing
 * lower (no database, no signals). The one HTTP edge: every route file takes these.
 */
export interface ApiServices {
  /** better-auth's `/api/auth/**` in the contract's terms (`auth/authHandler.ts`). */
  authRequests: (event: H3Event) => Promise<Response>;
  accounts: AccountService;
  logger: Logger;
  http: HttpPolicy;
  /** Resolves when the database answers; `503 unavailable` otherwise (`GET /api/ready`). */
  ready: () => Promise<void>;
  threads: ThreadService;
  /** Compact now (C3). */
  context: ContextService;
  events: ThreadEvents;
  acceptance: TurnAcceptance;
  queue: QueueService;
  claims: HeadClaims;
  interrupts: InterruptService;
  streams: TurnStreams;
  branches: BranchService;
  shares: ShareService;
  feedback: FeedbackService;
  approvals: ApprovalService;
  attachments: AttachmentService;
  portability: PortabilityService;
  /** The configured models and the person's own settings (M1, M4). */
  settings: SettingsService;
}
