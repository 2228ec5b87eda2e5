import type { TurnStatus } from '@chat/contracts';
import type { UIMessageChunk } from 'ai';
import type { ReplySource } from '../../../platform/http';

interface Listener {
  onChunk: (chunk: UIMessageChunk) => void;
  onClose: () => void;
}

/**
 * The reply stream of one running turn, fanned out to any number of subscribers (the sender, a
 * reloaded page, another tab). A late subscriber first gets every chunk so far, then live ones.
 * The turn runs whatever the subscribers do: a subscriber leaving never stops it (S1).
 *
 * Live chunks reach followers synchronously, in `push`: no stream or promise between the run and
 * the response's writer, since each would cost jobs and garbage per word of every reply.
 */
export class TurnStream implements ReplySource {
  private readonly chunks: UIMessageChunk[] = [];
  private readonly subscribers = new Set<ReadableStreamDefaultController<UIMessageChunk>>();
  private readonly listeners = new Set<Listener>();
  private closed = false;

  push(chunk: UIMessageChunk): void {
    if (this.closed) return;
    this.chunks.push(chunk);
    for (const controller of this.subscribers) controller.enqueue(chunk);
    for (const listener of this.listeners) listener.onChunk(chunk);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.subscribers) controller.close();
    this.subscribers.clear();
    for (const listener of this.listeners) listener.onClose();
    this.listeners.clear();
  }

  /** How many chunks the reply has so far; chunk `n` of it is `chunkAt(n)`. */
  get size(): number {
    return this.chunks.length;
  }

  chunkAt(index: number): UIMessageChunk | undefined {
    return this.chunks[index];
  }

  /**
   * Tells `onChunk` each chunk as it is added (also readable later with `chunkAt`) and `onClose` at the end,
   * synchronously; returns the unsubscribe. For readers that keep their own place in the reply.
   */
  listen(onChunk: (chunk: UIMessageChunk) => void, onClose: () => void): () => void {
    const listener: Listener = { onChunk, onClose };
    if (this.closed) {
      onClose();
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  follow(onChunk: (chunk: UIMessageChunk) => void, onEnd: () => void): () => void {
    for (const chunk of this.chunks) onChunk(chunk);
    return this.listen(onChunk, onEnd);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The same as a web stream (for readers that want one; the HTTP answer uses `follow`). */
  subscribe(): ReadableStream<UIMessageChunk> {
    let self: ReadableStreamDefaultController<UIMessageChunk> | undefined;
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        for (const chunk of this.chunks) controller.enqueue(chunk);
        if (this.closed) controller.close();
        else {
          self = controller;
          this.subscribers.add(controller);
        }
      },
      cancel: () => {
        if (self) this.subscribers.delete(self);
      },
    });
  }
}

/**
 * The chunks that end a reply stream once its turn is settled: an interrupted reply ends with
 * `abort` and a finish marked `interrupted` (S2), any other with a plain finish.
 */
export function endOfReply(status: TurnStatus): UIMessageChunk[] {
  if (status === 'interrupted')
    return [{ type: 'abort' }, { type: 'finish', messageMetadata: { interrupted: true } }];
  return [{ type: 'finish' }];
}

/** A web stream of chunks as a `ReplySource` (a reply followed from another instance). */
export function replySourceOf(stream: ReadableStream<UIMessageChunk>): ReplySource {
  return {
    follow(onChunk, onEnd) {
      const reader = stream.getReader();
      let stopped = false;
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (stopped) return;
            if (done) break;
            onChunk(value);
          }
          onEnd();
        } catch (error) {
          if (!stopped) onEnd(error);
        }
      })();
      return () => {
        stopped = true;
        reader.cancel().catch(() => {});
      };
    },
  };
}
