import type { Turn } from '@chat/contracts';
import type { TurnRow } from '@chat/db';

/** A turn row as the contract shows it. */
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
