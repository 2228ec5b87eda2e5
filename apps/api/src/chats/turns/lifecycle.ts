import type { TurnStatus } from '@chat/contracts';
import { InvariantError } from '../../platform/errors';

/**
 * The one transition table of a ChatTurnRequest. Every status write goes through `assertTransition`
 * (see repository.transitionTurn); anything not listed is a bug.
 *
 *   queued  -> running -> completed | interrupted | failed
 *   running -> awaiting_approval    (the model asked for a tool that needs approval; H3)
 *   awaiting_approval -> running    (approved or denied: the same turn continues)
 *   awaiting_approval -> interrupted (Stop, or Stop & send, while it waits: the request is cancelled)
 *   queued  -> cancelled            (deleted from the dock)
 *   failed  -> running              (retried: claimed again at once; Q11)
 *   failed  -> queued               (edited; Q11)
 *   failed  -> cancelled            (deleted)
 *   steer_pending -> delivered      (the running reply took it in at a step boundary)
 *   steer_pending -> queued         (the reply ended first, or its driver cannot steer: head of the queue)
 */
const transitions: Record<TurnStatus, readonly TurnStatus[]> = {
  queued: ['running', 'cancelled'],
  running: ['completed', 'interrupted', 'failed', 'awaiting_approval'],
  awaiting_approval: ['running', 'interrupted'],
  failed: ['running', 'queued', 'cancelled'],
  completed: [],
  interrupted: [],
  cancelled: [],
  steer_pending: ['delivered', 'queued'],
  delivered: [],
};

export function canTransition(from: TurnStatus, to: TurnStatus): boolean {
  return transitions[from].includes(to);
}

export function assertTransition(from: TurnStatus, to: TurnStatus): void {
  if (!canTransition(from, to)) throw new InvariantError(`illegal turn transition ${from} -> ${to}`);
}
