import type { Database } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { findTurn } from './repository';

/** How often a remote viewer reads the running turn's checkpoint. */
const POLL_MS = 250;

/**
 * The reply of a turn running on another API instance, rebuilt from its checkpoints: the text so
 * far, then what each checkpoint adds, until the turn settles. Coarser than the owner's stream
 * (checkpoint granularity, text only), but it lets a reload or second tab behind any load balancer
 * follow the reply.
 */
export function remoteTurnStream(
  db: Database,
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
        const turn = await findTurn(db, threadId, turnId);
        if (!turn) break;
        if (!started) {
          controller.enqueue({
            type: 'start',
            ...(turn.assistantMessageId ? { messageId: turn.assistantMessageId } : {}),
          });
          controller.enqueue({ type: 'text-start', id: textId });
          started = true;
        }
        if (turn.partialText.length > sent.length && turn.partialText.startsWith(sent)) {
          controller.enqueue({ type: 'text-delta', id: textId, delta: turn.partialText.slice(sent.length) });
          sent = turn.partialText;
        }
        if (turn.status !== 'running') {
          controller.enqueue({ type: 'text-end', id: textId });
          if (turn.status === 'interrupted') controller.enqueue({ type: 'abort' });
          if (turn.status === 'failed' && turn.error)
            controller.enqueue({ type: 'error', errorText: turn.error });
          controller.enqueue({
            type: 'finish',
            ...(turn.status === 'interrupted' ? { messageMetadata: { interrupted: true } } : {}),
          });
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
