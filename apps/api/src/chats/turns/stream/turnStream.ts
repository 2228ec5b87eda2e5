import type { TurnStatus } from '@chat/contracts';
import type { UIMessageChunk } from 'ai';

/**
 * The reply stream of one running turn, fanned out to any number of subscribers (the sender, a
 * reloaded page, another tab). A late subscriber first gets every chunk so far, then live ones.
 * The turn runs whatever the subscribers do: a subscriber leaving never stops it (S1).
 */
export class TurnStream {
  private readonly chunks: UIMessageChunk[] = [];
  private readonly subscribers = new Set<ReadableStreamDefaultController<UIMessageChunk>>();
  private readonly listeners = new Set<{ onChunk: () => void; onClose: () => void }>();
  private closed = false;

  push(chunk: UIMessageChunk): void {
    if (this.closed) return;
    this.chunks.push(chunk);
    for (const controller of this.subscribers) controller.enqueue(chunk);
    for (const listener of this.listeners) listener.onChunk();
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
   * Tells `onChunk` each time a chunk is added (read it with `chunkAt`) and `onClose` at the end,
   * synchronously; returns the unsubscribe. For readers that keep their own place in the reply.
   */
  listen(onChunk: () => void, onClose: () => void): () => void {
    const listener = { onChunk, onClose };
    if (this.closed) {
      onClose();
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get isClosed(): boolean {
    return this.closed;
  }

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
