import type { Turn, TurnQueue } from '@chat/contracts';
import type { TurnRow } from '@chat/db';

export function toTurn(row: TurnRow): Turn {
  return {
    id: row.id,
    threadId: row.threadId,
    branchId: row.branchId,
    status: row.status,
    text: row.text,
    clientRequestId: row.clientRequestId,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    error: row.error,
    steer: row.steer,
    attachments: row.attachments,
  };
}

export function toTurnQueue(active: TurnRow | undefined, queued: TurnRow[], paused: boolean): TurnQueue {
  return { activeTurn: active ? toTurn(active) : null, items: queued.map(toTurn), paused };
}
