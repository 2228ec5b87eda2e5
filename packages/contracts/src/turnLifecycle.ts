/**
 * The lifecycle of a turn (a ChatTurnRequest): its statuses, the one table of moves between them,
 * and the groups of statuses the rules speak of. The API enforces the table on every write
 * (`apps/api/src/chats/turns/lifecycle.ts`), the database's partial indexes use the groups, and
 * the web reads them to know what a turn in the Dock may do.
 */

export const turnStatuses = [
  'queued',
  'running',
  /**
   * The run has ended and its reply is being made durable: the turn row holds the reply and how
   * the run ended (the snapshot) while its messages are written to memory, so a database outage or
   * a crash at that moment never shows it done with its messages missing. Ends as the snapshot says.
   */
  'settling',
  /** The model asked to run a tool that needs a person's approval; the turn waits (H3, Q12). */
  'awaiting_approval',
  'completed',
  'interrupted',
  'failed',
  'cancelled',
  /** Sent with `mode: 'steer'` while a turn runs: joins that reply at its next step boundary. */
  'steer_pending',
  /** A steer the running reply received at a step boundary (its text is a user message in place). */
  'delivered',
] as const;
export type TurnStatus = (typeof turnStatuses)[number];

/**
 * Every legal move; anything not listed is a bug.
 *
 *   queued  -> running -> completed | interrupted | failed
 *   running -> settling -> completed | interrupted | failed
 *                                   (the reply's messages could not be confirmed in memory at once)
 *   running -> awaiting_approval    (the model asked for a tool that needs approval; H3)
 *   awaiting_approval -> running    (approved or denied: the same turn continues)
 *   awaiting_approval -> interrupted (Stop, or Stop & send, while it waits: the request is cancelled)
 *   queued  -> cancelled            (deleted from the Dock)
 *   failed  -> running              (retried: claimed again at once; Q11)
 *   failed  -> queued               (edited; Q11)
 *   failed  -> cancelled            (deleted)
 *   steer_pending -> delivered      (the running reply took it in at a step boundary)
 *   steer_pending -> queued         (the reply ended first, or its driver cannot steer)
 *   steer_pending -> cancelled      (deleted from the Dock before the reply took it in; Q8)
 */
export const turnTransitions: Readonly<Record<TurnStatus, readonly TurnStatus[]>> = {
  queued: ['running', 'cancelled'],
  running: ['completed', 'interrupted', 'failed', 'awaiting_approval', 'settling'],
  settling: ['completed', 'interrupted', 'failed'],
  awaiting_approval: ['running', 'interrupted'],
  failed: ['running', 'queued', 'cancelled'],
  completed: [],
  interrupted: [],
  cancelled: [],
  steer_pending: ['delivered', 'queued', 'cancelled'],
  delivered: [],
};

/** The groups of statuses the rules speak of; each rule names its group, never the statuses. */
export const turnStatusGroups = {
  /**
   * Holds the thread's one active slot (Q5): running, settling its reply, or waiting for a tool
   * approval (Q12; it has no runner while it waits). The database's partial unique index enforces
   * one per thread.
   */
  active: ['running', 'settling', 'awaiting_approval'],
  /**
   * Has a runner holding a lease: producing its reply, or making it durable. A lapsed lease means
   * its runner is gone (crash recovery).
   */
  leased: ['running', 'settling'],
  /**
   * Waits in the queue: shown in the Dock in queue order and counted toward its cap (Q4, Q6). A
   * failed turn waits at the head until it is resolved (Q11); a pending steer waits for the running
   * reply's next step.
   */
  waiting: ['queued', 'failed', 'steer_pending'],
  /** What the Dock may edit or delete (Q8, Q11): every waiting item, a steer until it is taken in. */
  editable: ['queued', 'failed', 'steer_pending'],
  /**
   * Ended for good with its messages final: what a share may show (H1), and whose last one on a
   * branch decides the handoff (S5).
   */
  settled: ['completed', 'interrupted'],
  /** Ran and left its messages in memory: the settled ones, and a failed attempt until resolved. */
  ran: ['completed', 'interrupted', 'failed'],
} as const satisfies Record<string, readonly TurnStatus[]>;
export type TurnStatusGroup = keyof typeof turnStatusGroups;

export function inStatusGroup(group: TurnStatusGroup, status: TurnStatus): boolean {
  return (turnStatusGroups[group] as readonly TurnStatus[]).includes(status);
}

export function canTransition(from: TurnStatus, to: TurnStatus): boolean {
  return turnTransitions[from].includes(to);
}
