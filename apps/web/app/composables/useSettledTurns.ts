import type { ThreadEvent } from '@chat/contracts';
import type { useThreadDetail } from './useThreadDetail';
import type { useTranscript } from './useTranscript';

type Settled = ThreadEvent & { type: 'turn.settled' };

/** How long the end of a stream waits for its turn's settle event before reading the detail. */
const SETTLE_EVENT_WAIT_MS = 2_000;

/**
 * Applies `turn.settled` events: the event carries the turn's final messages, which replace the
 * tab's copy of the turn (its optimistic user message, its streamed reply), so a settle costs no
 * read of the whole detail. The detail is read instead when the event cannot be applied: no
 * messages in it (an edited version's first turn), another version shown, or the transcript does
 * not end with that turn. A stream's end and its settle event race: whichever comes second applies.
 */
export function useSettledTurns(options: {
  transcript: ReturnType<typeof useTranscript>;
  detail: ReturnType<typeof useThreadDetail>;
  /** The thread's events stream is open (a settle event is on its way). */
  attached: Readonly<Ref<boolean>>;
}) {
  const { transcript, detail } = options;
  /** Settle events that arrived while their turn's stream was still being shown. */
  const early = new Map<string, Settled>();
  /** Stream ends waiting for their turn's settle event. */
  const waiting = new Map<string, () => void>();

  /** Applies the event's messages; false when the detail must be read instead. */
  function apply(event: Settled): boolean {
    if (!event.messages) return false;
    if (detail.thread.value?.activeBranchId !== event.turn.branchId) return false;
    if (!transcript.applyTurnMessages(event.turn.id, toChatUIMessages(event.messages))) return false;
    detail.transcriptChanged();
    return true;
  }

  /** A `turn.settled` event arrived. */
  function onSettled(event: Settled): void {
    const turnId = event.turn.id;
    if (transcript.streamingTurnId.value === turnId) {
      early.set(turnId, event);
      return;
    }
    if (!apply(event)) void detail.refresh();
    waiting.get(turnId)?.();
  }

  /** A turn's stream ended on its own (useLiveTurn's `afterTurnStream`). */
  async function afterStream(turnId: string): Promise<void> {
    // The streamed turn is newer than any detail requested while it streamed.
    detail.transcriptChanged();
    const event = early.get(turnId);
    early.delete(turnId);
    if (event) {
      if (!apply(event)) await detail.refresh();
      return;
    }
    if (options.attached.value && (await settleEventArrives(turnId))) return;
    await detail.refresh();
  }

  /** True once the turn's settle event was handled; false after a wait without it. */
  function settleEventArrives(turnId: string): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(turnId);
        resolve(false);
      }, SETTLE_EVENT_WAIT_MS);
      waiting.set(turnId, () => {
        clearTimeout(timer);
        waiting.delete(turnId);
        resolve(true);
      });
    });
  }

  return { onSettled, afterStream };
}
