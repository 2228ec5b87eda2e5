import {
  type ChatMessageMetadata,
  isDocumentAttachment,
  type MessageDocument,
  turnErrorMessages,
} from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { readDocumentCuts } from '../attachments/repository';
import { listTurnMarksOfMessages, type TurnMarkRow } from './repository';

/**
 * What the API knows of each message (it owns interrupt state, O2): the turn it belongs to, and
 * whether a reply was interrupted or is a failed attempt waiting at the queue head (Q11: the reply
 * gets `failed` and `error`, or the user message does when the attempt failed before any text).
 * A user message's documents say what their chips show: size, pages, and how much the model read
 * when that was not all (D1). Keyed by message id as streamed, which is also the origin id of its
 * copies in other versions, so they share the marks.
 */
export async function readMessageMarks(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<Map<string, ChatMessageMetadata>> {
  return await marksOfTurns(q, await listTurnMarksOfMessages(q, threadId, messageIds));
}

/** The marks of messages from their turns' rows (listTurnMarksOfMessages); documents read fresh. */
export async function marksOfTurns(
  q: Queryable,
  turns: readonly TurnMarkRow[],
): Promise<Map<string, ChatMessageMetadata>> {
  const metadata = new Map<string, ChatMessageMetadata>();
  const documentsOf = await messageDocuments(q, turns);
  for (const turn of turns) {
    const failed =
      turn.status === 'failed' ? { failed: true, error: turn.error ?? turnErrorMessages.unknown } : {};
    if (turn.userMessageId) {
      const documents = documentsOf.get(turn.id);
      metadata.set(turn.userMessageId, {
        turnId: turn.id,
        // A steer requeued because the reply ended first ran as any message: only one that joined
        // a running reply is marked.
        ...(turn.status === 'delivered' ? { steered: true } : {}),
        ...(turn.assistantMessageId ? {} : failed),
        ...(documents ? { documents } : {}),
      });
    }
    if (!turn.assistantMessageId) continue;
    metadata.set(turn.assistantMessageId, {
      turnId: turn.id,
      ...(turn.status === 'interrupted' ? { interrupted: true } : {}),
      ...failed,
      ...(turn.model ? { model: turn.model } : {}),
      ...(turn.usage ? { usage: turn.usage } : {}),
    });
  }
  return metadata;
}

/** The documents each turn's user message carries, as their chips describe them. */
async function messageDocuments(
  q: Queryable,
  turns: readonly TurnMarkRow[],
): Promise<Map<string, MessageDocument[]>> {
  const documents = turns.flatMap((turn) =>
    turn.userMessageId
      ? turn.attachments.filter(isDocumentAttachment).map((attachment) => ({ turn, attachment }))
      : [],
  );
  if (documents.length === 0) return new Map();
  const cuts = await readDocumentCuts(
    q,
    documents.map(({ attachment }) => attachment.id),
  );
  const byTurn = new Map<string, MessageDocument[]>();
  for (const { turn, attachment } of documents) {
    const cut = cuts.get(attachment.id);
    const list = byTurn.get(turn.id) ?? [];
    list.push({
      id: attachment.id,
      size: attachment.size,
      ...(attachment.pages === undefined ? {} : { pages: attachment.pages }),
      ...(attachment.words === undefined ? {} : { words: attachment.words }),
      ...(cut
        ? { cut: { ...cut, unit: attachment.mediaType === 'application/pdf' ? 'pages' : 'lines' } }
        : {}),
    });
    byTurn.set(turn.id, list);
  }
  return byTurn;
}
