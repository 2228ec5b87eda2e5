import { inStatusGroup } from '@chat/contracts';
import type { Database, TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { notFound } from '../../../platform/errors';
import type { ReplySource } from '../../../platform/http';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { readMessageText } from '../../branches/transcript';
import { requireOwnedThread } from '../../threads/repository';
import type { TranscriptStore } from '../../transcript/transcriptStore';
import { findTurn } from '../repository';
import { PieceReader, StreamFanOut, WATCH_MS } from './fanOut';
import { endOfReply, replySourceOf, type TurnStream } from './turnStream';

/** How often a viewer falling back to checkpoints reads the running turn's row. */
const POLL_MS = 250;
/** A viewer renews its watch this often (the running instance keeps sending for WATCH_MS). */
const RENEW_MS = WATCH_MS / 3;
/**
 * A watch answered by nothing for this long (the turn ended meanwhile, or the instance running it
 * does not send pieces): the viewer follows the turn's checkpoints instead.
 */
const SILENCE_MS = 2_000;
/** After the turn's settle signal, how long the end of its pieces may still take to arrive. */
const SETTLE_GRACE_MS = 1_000;

/**
 * The replies running on this instance (the runner, running/runner.ts, given by the wiring). Named
 * here so the stream to subscribers never imports the running lifecycle above it.
 */
export interface LiveReplies {
  /** The live reply of a turn running on this instance. */
  replyStream(turnId: string): TurnStream | undefined;
}

export interface TurnStreamsDeps {
  db: Database;
  runner: LiveReplies;
  transcript: TranscriptStore;
  signals: Signals;
  logger: Logger;
}

/** Following a running turn's reply (a reload, a second tab) from any instance. */
export class TurnStreams {
  private readonly fanOut: StreamFanOut;

  constructor(private readonly deps: TurnStreamsDeps) {
    // This instance's running turns, for viewers on other instances.
    this.fanOut = new StreamFanOut({
      signals: deps.signals,
      logger: deps.logger,
      replyStream: (turnId) => deps.runner.replyStream(turnId),
    });
  }

  /**
   * The stream of a running turn (what streamed so far, then live), or null when it has finished.
   * A turn running on another instance is followed through the pieces that instance sends
   * (`fanOut.ts`), within milliseconds of its own viewers.
   */
  async attach(ownerId: string, threadId: string, turnId: string): Promise<ReplySource | null> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('turn');
    // Running, or settling its reply (the stream ends once it is durable); else nothing to follow.
    if (!inStatusGroup('leased', turn.status)) return null;
    return (
      this.deps.runner.replyStream(turnId) ?? replySourceOf(remoteTurnStream(this.deps, threadId, turnId))
    );
  }

  stop(): void {
    this.fanOut.stop();
  }
}

/**
 * A turn running on another instance: asks that instance for its chunks (`stream.watch`) and
 * passes them on as they arrive, renewing the watch while it reads. When nothing answers (the
 * turn ended just now, or that instance does not send pieces) it follows the turn's checkpoints
 * instead; when the turn settles without its last pieces (its instance died) it ends the reply.
 */
function remoteTurnStream(
  deps: TurnStreamsDeps,
  threadId: string,
  turnId: string,
): ReadableStream<UIMessageChunk> {
  const { signals } = deps;
  const reader = new PieceReader(turnId);
  let cleanup = () => {};
  let fallback: ReadableStream<UIMessageChunk> | undefined;
  return new ReadableStream<UIMessageChunk>({
    start: (controller) => {
      let done = false;
      let heard = false;
      const timers: NodeJS.Timeout[] = [];
      const stopListening: Array<() => void> = [];
      cleanup = () => {
        done = true;
        for (const timer of timers) clearTimeout(timer);
        for (const stop of stopListening) stop();
      };
      const finish = (endChunks: UIMessageChunk[] = []) => {
        if (done) return;
        cleanup();
        for (const chunk of endChunks) controller.enqueue(chunk);
        controller.close();
      };
      const watch = () =>
        signals.publish({ kind: 'stream.watch', turnId, from: reader.next }).catch(() => {});
      stopListening.push(
        signals.subscribeStream((payload) => {
          if (done) return;
          const chunks = reader.accept(payload);
          if (chunks.length > 0 || reader.ended) heard = true;
          for (const chunk of chunks) controller.enqueue(chunk);
          if (reader.ended) finish();
        }),
        signals.subscribe((signal) => {
          if (signal.kind !== 'turn.settled' || signal.turnId !== turnId) return;
          // Its last pieces may still be on their way; past the grace, end it here.
          timers.push(
            setTimeout(() => {
              if (done) return;
              void endedTurn(deps, threadId, turnId).then(finish, () => finish([{ type: 'finish' }]));
            }, SETTLE_GRACE_MS),
          );
        }),
      );
      const renew = setInterval(() => void watch(), RENEW_MS);
      stopListening.push(() => clearInterval(renew));
      timers.push(
        setTimeout(() => {
          if (done || heard) return;
          // Nothing answered: follow the checkpoints instead, from the start.
          cleanup();
          fallback = checkpointTurnStream(deps, threadId, turnId);
          void pipeInto(fallback, controller);
        }, SILENCE_MS),
      );
      void watch();
    },
    cancel: async () => {
      cleanup();
      await fallback?.cancel();
    },
  });
}

/** The end chunks of a turn that settled without its last pieces arriving (the error first, if any). */
async function endedTurn(deps: TurnStreamsDeps, threadId: string, turnId: string): Promise<UIMessageChunk[]> {
  const turn = await findTurn(deps.db, threadId, turnId);
  if (!turn) return [{ type: 'finish' }];
  const error: UIMessageChunk[] =
    turn.status === 'failed' && turn.error ? [{ type: 'error', errorText: turn.error }] : [];
  return [...error, ...endOfReply(turn.status)];
}

/** Reads `source` into `controller` to its end (the checkpoints, when no pieces come). */
async function pipeInto(
  source: ReadableStream<UIMessageChunk>,
  controller: ReadableStreamDefaultController<UIMessageChunk>,
): Promise<void> {
  const reader = source.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      controller.enqueue(value);
    }
    controller.close();
  } catch {
    // The viewer went away (the outer stream was cancelled, and with it this one).
  }
}

/**
 * The reply of a turn running on another API instance, rebuilt from its checkpoints: the text so
 * far, then what each checkpoint adds, until the turn settles (a turn settling its reply shows the
 * reply its row holds meanwhile). Coarser than the pieces its instance sends (checkpoint
 * granularity, text only): only for when those do not come.
 */
function checkpointTurnStream(
  deps: { db: Database; transcript: TranscriptStore },
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
        const text = leased ? turn.partialText : await finalReplyText(deps.transcript, turn);
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
async function finalReplyText(transcript: TranscriptStore, turn: TurnRow): Promise<string> {
  if (turn.partialText || !turn.assistantMessageId) return turn.partialText;
  return (await readMessageText(transcript, turn.assistantMessageId)) ?? '';
}
