import type { TurnQueue } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { toTurn } from '../dto';
import { readQueueRows } from './repository';

/** The thread's queue as the contract shows it (Q6): the active turn and the waiting items in order. */
export async function readTurnQueue(q: Queryable, threadId: string): Promise<TurnQueue> {
  const { active, waiting, paused } = await readQueueRows(q, threadId);
  return toTurnQueue(active, waiting, paused);
}

export function toTurnQueue(active: TurnRow | undefined, waiting: TurnRow[], paused: boolean): TurnQueue {
  return { activeTurn: active ? toTurn(active) : null, items: waiting.map(toTurn), paused };
}
