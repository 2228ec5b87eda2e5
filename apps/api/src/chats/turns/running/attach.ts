import { inStatusGroup } from '@chat/contracts';
import type { Database, TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';
import type { UIMessageChunk } from 'ai';
import { notFound } from '../../../platform/errors';
import { readMessageText } from '../../branches/transcript';
import { requireOwnedThread } from '../../threads/repository';
import { findTurn } from '../repository';
import type { TurnRunner } from './runner';
import { endOfReply } from './turnStream';

/** How often a remote viewer reads the running turn's checkpoint. */
const POLL_MS = 250;

/** Following a running turn's reply (a reload, a second tab) from any instance. */
export class TurnStreams {
  constructor(private readonly deps: { db: Database; runner: TurnRunner; memory: Memory }) {}

  /**
   * The stream of a running turn (what streamed so far, then live), or null when it has finished.
   * A turn running on another instance is followed through its checkpoints.
   */
  async attach(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('turn');
    // Running, or settling its reply (the stream ends once it is durable); else nothing to follow.
    if (!inStatusGroup('leased', turn.status)) return null;
    return this.deps.runner.replyStream(turnId)?.subscribe() ?? remoteTurnStream(this.deps, threadId, turnId);
  }
}

/**
 * The reply of a turn running on another API instance, rebuilt from its checkpoints: the text so
 * far, then what each checkpoint adds, until the turn settles (a turn settling its reply shows the
 * reply its row holds meanwhile). Coarser than the owner's stream
 * (checkpoint granularity, text only), but it lets a reload or second tab behind any load balancer
 * follow the reply.
 */
function remoteTurnStream(
  deps: { db: Database; memory: Memory },
  threadId: string,
  turnId: string,
): ReadableStream<UIMessageChunk> {
  let cancelled = false;
  return new ReadableStream<UIMessageChunk>({
    start: async (controller) => {
      const textId = `remote-${turnId}`;
      let sent = '';
      let started = false;
      while (!cancelled) {
        const turn = await findTurn(deps.db, threadId, turnId);
        if (!turn) break;
        const leased = inStatusGroup('leased', turn.status);
        // While it runs or settles, the row holds the streaming message's text; then memory does.
        const text = leased ? turn.partialText : await finalReplyText(deps.memory, turn);
        if (!started) {
          controller.enqueue({
            type: 'start',
            ...(turn.assistantMessageId ? { messageId: turn.assistantMessageId } : {}),
          });
          controller.enqueue({ type: 'text-start', id: textId });
          started = true;
        }
        if (text.length > sent.length && text.startsWith(sent)) {
          controller.enqueue({ type: 'text-delta', id: textId, delta: text.slice(sent.length) });
          sent = text;
        }
        if (!leased) {
          controller.enqueue({ type: 'text-end', id: textId });
          // The owner's stream carried the error as it happened; here it comes with the end.
          if (turn.status === 'failed' && turn.error)
            controller.enqueue({ type: 'error', errorText: turn.error });
          for (const chunk of endOfReply(turn.status)) controller.enqueue(chunk);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (!cancelled) controller.close();
    },
    cancel: () => {
      cancelled = true;
    },
  });
}

/**
 * A settled turn's checkpoint text is cleared once its reply is in memory, so the end of the reply
 * (what streamed after the last checkpoint) is read from there, by the reply's id.
 */
async function finalReplyText(memory: Memory, turn: TurnRow): Promise<string> {
  if (turn.partialText || !turn.assistantMessageId) return turn.partialText;
  return (await readMessageText(memory, turn.assistantMessageId)) ?? '';
}
