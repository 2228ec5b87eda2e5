import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { encodePieces, endPiece, PieceReader } from '../src/chats/turns/stream/fanOut';
import { MAX_NOTIFY_BYTES } from '../src/platform/notifications';

const TURN = '6f1c1a52-3f59-4c11-9d0e-3c8f4a0d2b7e';
const OTHER = '0b9e2c71-55aa-4b1e-8c1d-7e2f9a1b3c4d';

function reply(words: number): UIMessageChunk[] {
  return [
    { type: 'start', messageId: 'm1' },
    { type: 'text-start', id: 't' },
    ...Array.from(
      { length: words },
      (_, index): UIMessageChunk => ({
        type: 'text-delta',
        id: 't',
        delta: `wörd ${index} `,
      }),
    ),
    { type: 'text-end', id: 't' },
    { type: 'finish' },
  ];
}

/** A tool result far bigger than one notification, with quotes, escapes, emoji and a NUL. */
const bigOutput: UIMessageChunk = {
  type: 'tool-output-available',
  toolCallId: 'c1',
  output: { text: `"quoted" \\ back\nslash \u0000 ${'🌊 tide '.repeat(4_000)}`, n: 42 },
};

describe('a running reply sent to other instances in notifications', () => {
  it('fits every notification under PostgreSQL’s payload limit, one chunk too big for one included', () => {
    const chunks = [...reply(2_000), bigOutput, ...reply(10)];
    const pieces = [...encodePieces(TURN, 0, chunks), endPiece(TURN, chunks.length)];
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(MAX_NOTIFY_BYTES);
    // Batched: far fewer notifications than chunks.
    expect(pieces.length).toBeLessThan(chunks.length / 20);
  });

  it('gives a viewer every chunk once, in order, however the notifications arrive, and says when it ended', () => {
    const chunks = [...reply(300), bigOutput, ...reply(5)];
    const first = encodePieces(TURN, 0, chunks.slice(0, 100));
    const rest = encodePieces(TURN, 100, chunks.slice(100));
    // Repeated (a replay for a second viewer), out of order, with another turn's pieces between.
    const arriving = [
      ...rest.slice().reverse(),
      ...encodePieces(OTHER, 0, reply(3)),
      ...first,
      ...first,
      endPiece(TURN, chunks.length),
    ];
    const reader = new PieceReader(TURN);
    const received: UIMessageChunk[] = [];
    for (const payload of arriving) {
      expect(reader.ended).toBe(false);
      received.push(...reader.accept(payload));
    }
    expect(received).toEqual(chunks);
    expect(reader.ended).toBe(true);
    expect(reader.next).toBe(chunks.length);
  });

  it('a replay from where the viewer is adds nothing it already has', () => {
    const chunks = reply(20);
    const reader = new PieceReader(TURN);
    const received = encodePieces(TURN, 0, chunks.slice(0, 10)).flatMap((piece) => reader.accept(piece));
    expect(received).toEqual(chunks.slice(0, 10));
    const again = encodePieces(TURN, 0, chunks).flatMap((piece) => reader.accept(piece));
    expect(again).toEqual(chunks.slice(10));
  });
});
