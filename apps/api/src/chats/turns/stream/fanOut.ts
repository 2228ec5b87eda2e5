import type { UIMessageChunk } from 'ai';
import type { Logger } from '../../../platform/logger';
import { MAX_NOTIFY_BYTES, type Signals } from '../../../platform/notifications';
import type { TurnStream } from './turnStream';

/**
 * A running reply followed from another API instance (Scale-out): the viewer's instance asks for
 * it (`stream.watch`, with the first piece it lacks), and the instance running the turn sends its
 * chunks through PostgreSQL notifications on the stream channel, batched under the payload limit,
 * until the reply ends or nobody renews the watch. Nothing is sent for a turn nobody watches.
 *
 * Pieces (JSON, the turn id first so a listener can skip other turns' pieces unparsed):
 * - `{"t":turnId,"s":seq,"c":[chunk, ...]}`: chunks seq, seq+1, ... of the reply;
 * - `{"t":turnId,"s":seq,"f":[i,n],"p":text}`: part i of n of chunk seq's JSON (a chunk too big
 *   for one notification);
 * - `{"t":turnId,"e":count}`: the reply has `count` chunks in all and is over.
 * A watch from an earlier seq sends again from there (a new viewer, or one that missed a piece);
 * viewers keep each seq once.
 */

/** How long a watch holds without renewal; viewers renew well within it. */
export const WATCH_MS = 10_000;
/** Chunks added within this long of the last notification wait for the next one. */
const FAN_OUT_BATCH_MS = 10;

const prefixOf = (turnId: string) => `{"t":${JSON.stringify(turnId)},`;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** The notifications that carry chunks `from`, `from + 1`, ... of `turnId`'s reply. */
export function encodePieces(turnId: string, from: number, chunks: readonly UIMessageChunk[]): string[] {
  const prefix = prefixOf(turnId);
  const pieces: string[] = [];
  let batch: string[] = [];
  let batchStart = from;
  let batchBytes = 0;
  const head = (seq: number) => `${prefix}"s":${seq},"c":[`;
  const flush = () => {
    if (batch.length > 0) pieces.push(`${head(batchStart)}${batch.join(',')}]}`);
    batch = [];
    batchBytes = 0;
  };
  chunks.forEach((chunk, index) => {
    const seq = from + index;
    const json = JSON.stringify(chunk);
    const size = bytes(json) + 1;
    if (bytes(head(seq)) + size + 2 > MAX_NOTIFY_BYTES) {
      flush();
      pieces.push(...fragments(prefix, seq, json));
      batchStart = seq + 1;
      return;
    }
    if (batch.length > 0 && bytes(head(batchStart)) + batchBytes + size + 2 > MAX_NOTIFY_BYTES) flush();
    if (batch.length === 0) batchStart = seq;
    batch.push(json);
    batchBytes += size;
  });
  flush();
  return pieces;
}

/** A chunk's JSON in parts that each fit a notification (quoted as JSON strings, so any text goes). */
function fragments(prefix: string, seq: number, json: string): string[] {
  const parts: string[] = [];
  const room = MAX_NOTIFY_BYTES - bytes(`${prefix}"s":${seq},"f":[0000000,0000000],"p":""}`);
  let at = 0;
  while (at < json.length) {
    let length = Math.min(json.length - at, room);
    while (bytes(JSON.stringify(json.slice(at, at + length))) > room + 2) length = Math.floor(length / 2);
    parts.push(json.slice(at, at + length));
    at += length;
  }
  return parts.map(
    (part, index) => `${prefix}"s":${seq},"f":[${index},${parts.length}],"p":${JSON.stringify(part)}}`,
  );
}

/** The notification that ends `turnId`'s reply after `count` chunks. */
export function endPiece(turnId: string, count: number): string {
  return `${prefixOf(turnId)}"e":${count}}`;
}

type Piece =
  | { t: string; s: number; c: UIMessageChunk[] }
  | { t: string; s: number; f: [number, number]; p: string }
  | { t: string; e: number };

/**
 * The viewer's side: takes the notifications of one turn (in any order, repeated or not) and
 * gives back its chunks in order, each once.
 */
export class PieceReader {
  /** The next chunk to give out: every one before it was given. */
  next = 0;
  private readonly prefix: string;
  private readonly waiting = new Map<number, UIMessageChunk>();
  private readonly parts = new Map<number, string[]>();
  private count: number | undefined;

  constructor(turnId: string) {
    this.prefix = prefixOf(turnId);
  }

  /** Whether every chunk of the reply has been given out. */
  get ended(): boolean {
    return this.count !== undefined && this.next >= this.count;
  }

  /** The chunks `payload` makes ready, in order (none when it is another turn's). */
  accept(payload: string): UIMessageChunk[] {
    if (!payload.startsWith(this.prefix)) return [];
    const piece = JSON.parse(payload) as Piece;
    if ('e' in piece) this.count = piece.e;
    else if ('c' in piece) {
      piece.c.forEach((chunk, index) => {
        if (piece.s + index >= this.next) this.waiting.set(piece.s + index, chunk);
      });
    } else if (piece.s >= this.next) {
      const [index, total] = piece.f;
      const parts = this.parts.get(piece.s) ?? new Array<string>(total);
      parts[index] = piece.p;
      this.parts.set(piece.s, parts);
      if (parts.filter((part) => part !== undefined).length === total) {
        this.parts.delete(piece.s);
        this.waiting.set(piece.s, JSON.parse(parts.join('')) as UIMessageChunk);
      }
    }
    const ready: UIMessageChunk[] = [];
    for (let chunk = this.waiting.get(this.next); chunk; chunk = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      ready.push(chunk);
      this.next += 1;
    }
    return ready;
  }
}

interface Publication {
  stream: TurnStream;
  /** The next chunk to send. */
  next: number;
  watchedUntil: number;
  lastSentAt: number;
  timer: NodeJS.Timeout | undefined;
  stopListening: () => void;
  /** Notifications go out one after another, so they arrive in order. */
  sending: Promise<void>;
}

/**
 * The running instance's side: answers `stream.watch` for turns this instance runs by sending
 * their chunks on the stream channel (see the file's comment).
 */
export class StreamFanOut {
  private readonly publications = new Map<string, Publication>();
  private readonly stopWatching: () => void;

  constructor(
    private readonly deps: {
      signals: Signals;
      logger: Logger;
      /** The live reply of a turn running on this instance. */
      replyStream: (turnId: string) => TurnStream | undefined;
      now?: () => number;
    },
  ) {
    this.stopWatching = deps.signals.subscribe((signal) => {
      if (signal.kind === 'stream.watch') this.watch(signal.turnId, signal.from);
    });
  }

  stop(): void {
    this.stopWatching();
    for (const turnId of [...this.publications.keys()]) this.end(turnId);
  }

  private get now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private watch(turnId: string, from: number): void {
    const stream = this.deps.replyStream(turnId);
    if (!stream) return;
    let publication = this.publications.get(turnId);
    if (!publication) {
      const created: Publication = {
        stream,
        next: from,
        watchedUntil: 0,
        lastSentAt: 0,
        timer: undefined,
        stopListening: () => {},
        sending: Promise.resolve(),
      };
      created.stopListening = stream.listen(
        () => this.schedule(turnId),
        () => this.schedule(turnId),
      );
      this.publications.set(turnId, created);
      publication = created;
    }
    publication.next = Math.min(publication.next, Math.max(0, from));
    publication.watchedUntil = this.now + WATCH_MS;
    this.schedule(turnId);
  }

  /** Sends at once when the last notification is older than the batch window, else at its end. */
  private schedule(turnId: string): void {
    const publication = this.publications.get(turnId);
    if (!publication || publication.timer) return;
    const waitMs = FAN_OUT_BATCH_MS - (performance.now() - publication.lastSentAt);
    if (waitMs <= 0 || publication.stream.isClosed) this.send(turnId);
    else publication.timer = setTimeout(() => this.send(turnId), waitMs);
  }

  private send(turnId: string): void {
    const publication = this.publications.get(turnId);
    if (!publication) return;
    clearTimeout(publication.timer);
    publication.timer = undefined;
    const { stream } = publication;
    const closed = stream.isClosed;
    if (!closed && this.now > publication.watchedUntil) {
      this.end(turnId);
      return;
    }
    const chunks: UIMessageChunk[] = [];
    for (let index = publication.next; index < stream.size; index++) {
      const chunk = stream.chunkAt(index);
      if (chunk) chunks.push(chunk);
    }
    const payloads = encodePieces(turnId, publication.next, chunks);
    publication.next = stream.size;
    if (closed) {
      payloads.push(endPiece(turnId, stream.size));
      this.end(turnId);
    }
    publication.lastSentAt = performance.now();
    const { signals, logger } = this.deps;
    publication.sending = publication.sending.then(async () => {
      for (const payload of payloads) {
        await signals.publishStream(payload).catch((error: unknown) => {
          logger.warn({ err: error, turnId }, 'could not send a reply piece to viewers on other instances');
        });
      }
    });
  }

  private end(turnId: string): void {
    const publication = this.publications.get(turnId);
    if (!publication) return;
    clearTimeout(publication.timer);
    publication.stopListening();
    this.publications.delete(turnId);
  }
}
