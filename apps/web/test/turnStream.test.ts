import { createUIMessageStream, createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatUIMessage } from '../app/utils/chatMessages';
import { readTurnStream } from '../app/utils/turnStream';

/** A turn's answer as the API sends it: the AI SDK UI message stream over SSE. */
function turnResponse(chunks: UIMessageChunk[]): Response {
  return createUIMessageStreamResponse({
    stream: createUIMessageStream({
      execute: ({ writer }) => {
        for (const chunk of chunks) writer.write(chunk);
      },
    }),
  });
}

const textOf = (message: ChatUIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');

async function read(response: Response, continues?: ChatUIMessage) {
  const snapshots: ChatUIMessage[] = [];
  const result = await readTurnStream(response, {
    signal: new AbortController().signal,
    continues,
    onSnapshot: (message) => snapshots.push(message),
  });
  return { ...result, snapshots, last: snapshots.at(-1) };
}

describe('readTurnStream (a turn stream read by @ai-sdk/vue into snapshots of the reply)', () => {
  it("hands a compaction's progress to the page and keeps it out of the reply (C3)", async () => {
    const progress: unknown[] = [];
    const snapshots: ChatUIMessage[] = [];
    await readTurnStream(
      turnResponse([
        { type: 'data-compaction', data: { status: 'compacting' }, transient: true },
        { type: 'data-compaction', data: { status: 'done' }, transient: true },
        { type: 'start', messageId: 'reply-c' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Answer.' },
        { type: 'text-end', id: 't' },
        { type: 'finish' },
      ]),
      {
        signal: new AbortController().signal,
        onSnapshot: (message) => snapshots.push(message),
        onCompaction: (value) => progress.push(value),
      },
    );
    expect(progress).toEqual([{ status: 'compacting' }, { status: 'done' }]);
    const last = snapshots.at(-1);
    expect(last?.id).toBe('reply-c');
    expect(last?.parts.map((part) => part.type)).not.toContain('data-compaction');
  });

  it('hands on the reply as it grows and ends with all of it', async () => {
    const { error, snapshots, last } = await read(
      turnResponse([
        { type: 'start', messageId: 'reply-1' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello ' },
        { type: 'text-delta', id: 't', delta: 'there.' },
        { type: 'text-end', id: 't' },
        { type: 'finish' },
      ]),
    );
    expect(error).toBeUndefined();
    expect(snapshots.length).toBeGreaterThan(0);
    expect(last?.id).toBe('reply-1');
    expect(last?.role).toBe('assistant');
    expect(textOf(last)).toBe('Hello there.');
  });

  it('continues the message it is given (a reply after an approval) without changing the original', async () => {
    const before: ChatUIMessage = {
      id: 'reply-2',
      role: 'assistant',
      parts: [{ type: 'text', text: 'Saving. ' }],
    };
    const { last } = await read(
      turnResponse([
        { type: 'start', messageId: 'reply-2' },
        { type: 'text-start', id: 'u' },
        { type: 'text-delta', id: 'u', delta: 'Saved.' },
        { type: 'text-end', id: 'u' },
        { type: 'finish' },
      ]),
      before,
    );
    expect(last?.id).toBe('reply-2');
    expect(textOf(last)).toBe('Saving. Saved.');
    expect(textOf(before)).toBe('Saving. ');
  });

  it('reports an error chunk and keeps reading the chunks after it (the reply keeps its failed mark)', async () => {
    const { error, last } = await read(
      turnResponse([
        { type: 'start', messageId: 'reply-3' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Half' },
        { type: 'text-end', id: 't' },
        { type: 'error', errorText: 'The model failed.' },
        { type: 'message-metadata', messageMetadata: { failed: true, error: 'The model failed.' } },
        { type: 'finish' },
      ]),
    );
    expect(error).toBe('The model failed.');
    expect(textOf(last)).toBe('Half');
    expect(last?.metadata).toMatchObject({ failed: true });
  });

  it('ends quietly when the reader aborts: no error', async () => {
    const controller = new AbortController();
    const stream = new ReadableStream<Uint8Array>({
      start(writer) {
        writer.enqueue(
          new TextEncoder().encode(
            'data: {"type":"start","messageId":"reply-4"}\n\ndata: {"type":"text-start","id":"t"}\n\n' +
              'data: {"type":"text-delta","id":"t","delta":"Part"}\n\n',
          ),
        );
        // Never closes: the reply is still running when the reader stops following it.
        controller.signal.addEventListener('abort', () =>
          writer.error(new DOMException('aborted', 'AbortError')),
        );
      },
    });
    const snapshots: ChatUIMessage[] = [];
    const reading = readTurnStream(new Response(stream), {
      signal: controller.signal,
      onSnapshot: (message) => snapshots.push(message),
    });
    await expect.poll(() => textOf(snapshots.at(-1))).toBe('Part');
    controller.abort();
    await expect(reading).resolves.toEqual({});
  });
});
