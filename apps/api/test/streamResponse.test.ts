import type { Readable } from 'node:stream';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { replySourceOf, TurnStream } from '../src/chats/turns/stream/turnStream';
import { replyBody, STREAM_OPENING_MS, turnStreamResponse } from '../src/platform/http';

function chunksOf(words: number): UIMessageChunk[] {
  return [
    { type: 'start', messageId: 'm1' },
    { type: 'text-start', id: 't1' },
    ...Array.from(
      { length: words },
      (_, index): UIMessageChunk => ({
        type: 'text-delta',
        id: 't1',
        delta: `word${index} `,
      }),
    ),
    { type: 'text-end', id: 't1' },
    { type: 'finish' },
  ];
}

function streamOf(chunks: UIMessageChunk[]): ReadableStream<UIMessageChunk> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function reads(response: Response): Promise<string[]> {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  for await (const bytes of response.body ?? []) parts.push(decoder.decode(bytes));
  return parts;
}

/** Each piece the body hands the socket: one write each, as the server pipes it. */
function writesOf(body: Readable): Promise<string[]> {
  const parts: string[] = [];
  return new Promise((resolve, reject) => {
    body.on('data', (bytes: Buffer) => parts.push(bytes.toString('utf8')));
    body.on('end', () => resolve(parts));
    body.on('error', reject);
  });
}

/** The next write of the body, and the text of what it held. */
function nextWrite(body: Readable): Promise<string> {
  return new Promise((resolve) => body.once('data', (bytes: Buffer) => resolve(bytes.toString('utf8'))));
}

const sourceOf = (chunks: UIMessageChunk[]) => replySourceOf(streamOf(chunks));

describe('a turn stream response', () => {
  it('sends exactly what the AI SDK would, with its headers and the turn id', async () => {
    const chunks = chunksOf(50);
    const ours = turnStreamResponse('turn-1', sourceOf(chunks));
    const theirs = createUIMessageStreamResponse({ stream: streamOf(chunks) });
    expect((await reads(ours)).join('')).toBe((await reads(theirs)).join(''));
    expect(ours.headers.get('x-turn-id')).toBe('turn-1');
    for (const name of ['content-type', 'x-vercel-ai-ui-message-stream', 'x-accel-buffering', 'connection'])
      expect(ours.headers.get(name), name).toBe(theirs.headers.get(name));
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes chunks that arrive together as one piece, not one write per chunk', async () => {
    // "Together" means within the batch interval. The clock stands still here, so a busy machine
    // (a CI run with every test file at once) cannot stretch the gap between two chunks past it.
    vi.useFakeTimers({ toFake: ['performance'] });
    const chunks = chunksOf(200);
    const parts = await writesOf(replyBody(sourceOf(chunks)));
    // The AI SDK's own response writes one piece per chunk (and one for [DONE]).
    expect((await reads(createUIMessageStreamResponse({ stream: streamOf(chunks) }))).length).toBe(
      chunks.length + 1,
    );
    expect(parts.length).toBeLessThan(chunks.length / 4);
    // A short reply that arrives at once: its opening with the first words, then the rest.
    expect(await writesOf(replyBody(sourceOf(chunksOf(5))))).toHaveLength(2);
  });

  it('sends the first text at once, without waiting for the batch', async () => {
    const reply = new TurnStream();
    reply.push({ type: 'start' });
    reply.push({ type: 'text-start', id: 't' });
    const body = replyBody(reply);
    const first = nextWrite(body);
    reply.push({ type: 'text-delta', id: 't', delta: 'Hello' });
    // Nothing else comes until the reply goes on: the first write must hold the first words
    // (held back for a batch, they would never come and this would hang).
    const before = await first;
    expect(before).toContain('"delta":"Hello"');
    expect(before).not.toContain('text-end');
    const rest = writesOf(body);
    reply.push({ type: 'text-end', id: 't' });
    reply.close();
    expect((await rest).join('').endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('writes a comment line when the run has said nothing yet, so the accepted send is answered', async () => {
    const reply = new TurnStream();
    const body = replyBody(reply);
    const startedAt = performance.now();
    // The first write (with it, over HTTP, the headers) comes while the run is still silent.
    expect(await nextWrite(body)).toBe(': accepted\n\n');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(STREAM_OPENING_MS - 20);
    const rest = writesOf(body);
    reply.push({ type: 'start', messageId: 'm1' });
    reply.close();
    expect((await rest).join('')).toBe('data: {"type":"start","messageId":"m1"}\n\ndata: [DONE]\n\n');
  });

  it('writes no comment line when the run speaks in time', async () => {
    const parts = await reads(turnStreamResponse('turn-1', sourceOf(chunksOf(3))));
    expect(parts.join('')).not.toContain(': accepted');
  });

  it('stops following the reply when the client goes away, and the reply goes on', async () => {
    const reply = new TurnStream();
    reply.push({ type: 'start' });
    const body = replyBody(reply);
    const closed = new Promise((resolve) => body.once('close', resolve));
    body.destroy();
    await closed;
    // A follower left behind would be handed every later chunk of a reply nobody reads.
    const listeners = (reply as unknown as { listeners: Set<unknown> }).listeners;
    expect(listeners.size).toBe(0);
    reply.push({ type: 'text-start', id: 't' });
    reply.close();
    expect(reply.size).toBe(2);
  });

  it('ends the answer with an error when the source breaks, never throwing into the run', async () => {
    const broken = new ReadableStream<UIMessageChunk>({
      start(controller) {
        controller.enqueue({ type: 'start' });
        controller.error(new Error('gone'));
      },
    });
    await expect(writesOf(replyBody(replySourceOf(broken)))).rejects.toThrow('gone');
  });
});
