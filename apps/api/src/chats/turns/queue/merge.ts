import {
  fixedPlaceOf,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MERGED_TEXT_SEPARATOR,
  refusalMessages,
} from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { ApiError, notEligible } from '../../../platform/errors';
import { insertTurn, transitionTurn } from '../lifecycle';
import { validMessageText } from '../messageText';
import { listWaitingTurns, requireWaitingTurn } from './repository';

/**
 * Q14: two or more waiting items become one, under the thread lock, in the caller's transaction.
 * The new item takes the place of the first of them in queue order (whatever order the request
 * named them in); its text is theirs in that order, a blank line between two, and its images are
 * all of theirs, each once. Past the text or image limit of one message nothing changes
 * (`413 too_large`, saying which). The items merged are cancelled like deleted ones, their text
 * cleared; their images now belong to the new item. Items that keep their place (a failed head,
 * steers) are not merged (`not_eligible`), as they are not moved.
 */
export async function mergeWaitingTurns(
  tx: Queryable,
  threadId: string,
  request: { clientRequestId: string; turnIds: readonly string[] },
): Promise<TurnRow> {
  const waiting = await listWaitingTurns(tx, threadId);
  const named = new Set<string>();
  for (const turnId of request.turnIds) {
    const turn = await requireWaitingTurn(tx, threadId, waiting, turnId);
    const fixed = fixedPlaceOf(turn);
    if (fixed) throw notEligible(fixed);
    named.add(turn.id);
  }
  const merged = waiting.filter((turn) => named.has(turn.id));
  const first = merged[0] as TurnRow;
  const text = validMessageText(
    merged.map((turn) => turn.text).join(MERGED_TEXT_SEPARATOR),
    refusalMessages.too_large.mergedText,
  );
  const attachments = [
    ...new Map(merged.flatMap((turn) => turn.attachments).map((image) => [image.id, image])).values(),
  ];
  if (attachments.length > MAX_ATTACHMENTS_PER_MESSAGE)
    throw new ApiError('too_large', refusalMessages.too_large.mergedImages);
  const finishedAt = new Date();
  for (const turn of merged) await transitionTurn(tx, turn, 'cancelled', { text: '', finishedAt });
  return await insertTurn(tx, 'queued', {
    threadId,
    branchId: first.branchId,
    clientRequestId: request.clientRequestId,
    text,
    attachments,
    queuePosition: first.queuePosition,
  });
}
