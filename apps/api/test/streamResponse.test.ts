import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STREAM_OPENING_MS, turnStreamResponse } from '../src/platform/http';

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

describe('a turn stream response', () => {
  it('sends exactly what the AI SDK would, with its headers and the turn id', async () => {
    const chunks = chunksOf(50);
    const ours = turnStreamResponse('turn-1', streamOf(chunks));
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
    const parts = await reads(turnStreamResponse('turn-1', streamOf(chunks)));
    // The AI SDK's own response writes one piece per chunk (and one for [DONE]).
    expect((await reads(createUIMessageStreamResponse({ stream: streamOf(chunks) }))).length).toBe(
      chunks.length + 1,
    );
    expect(parts.length).toBeLessThan(chunks.length / 4);
    // A short reply that arrives at once: its opening with the first words, then the rest.
    expect(await reads(turnStreamResponse('turn-2', streamOf(chunksOf(5))))).toHaveLength(2);
  });

  it('sends the first text at once, without waiting for the batch', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const source = new ReadableStream<UIMessageChunk>({
      async start(controller) {
        controller.enqueue({ type: 'start' });
        controller.enqueue({ type: 'text-start', id: 't' });
        controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hello' });
        await held;
        controller.enqueue({ type: 'text-end', id: 't' });
        controller.close();
      },
    });
    const reader = (turnStreamResponse('turn-1', source).body as ReadableStream<Uint8Array>).getReader();
    // Nothing else arrives until released: what is written before must hold the first words
    // (held back for a batch, they would never come and this read would hang).
    let before = '';
    while (!before.includes('"delta":"Hello"'))
      before += new TextDecoder().decode((await reader.read()).value);
    expect(before).not.toContain('text-end');
    release();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('writes a comment line when the run has said nothing yet, so the accepted send is answered', async () => {
    let emit: (chunk: UIMessageChunk) => void = () => {};
    let close = () => {};
    const source = new ReadableStream<UIMessageChunk>({
      start(controller) {
        emit = (chunk) => controller.enqueue(chunk);
        close = () => controller.close();
      },
    });
    const reader = (turnStreamResponse('turn-1', source).body as ReadableStream<Uint8Array>).getReader();
    const startedAt = performance.now();
    const first = await reader.read();
    // The first write (with it, over HTTP, the headers) comes while the run is still silent.
    expect(new TextDecoder().decode(first.value)).toBe(': accepted\n\n');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(STREAM_OPENING_MS - 20);
    emit({ type: 'start', messageId: 'm1' });
    close();
    const rest: string[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read())
      rest.push(new TextDecoder().decode(next.value));
    expect(rest.join('')).toBe('data: {"type":"start","messageId":"m1"}\n\ndata: [DONE]\n\n');
  });

  it('writes no comment line when the run speaks in time', async () => {
    const parts = await reads(turnStreamResponse('turn-1', streamOf(chunksOf(3))));
    expect(parts.join('')).not.toContain(': accepted');
  });
});
