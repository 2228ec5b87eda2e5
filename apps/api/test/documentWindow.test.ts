import type { Attachment, ChatMessage, Thread } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfChunks } from './support/client';
import { sendWithImages, upload } from './support/images';
import { useTestApi } from './support/testApi';

let client: ApiClient;
// Two built-in models that differ only by their window; the deployment's document budget
// (24,000 tokens a message) is far more than the small one holds.
useTestApi(
  (started) => {
    ({ client } = started);
  },
  { CHAT_MODELS: 'local;id=small;label=Small;window=2000,local;id=large;label=Large;window=16000' },
);

/** A text of 2,000 lines of ten words: about 22,000 tokens, all of it within the configured budget. */
const longText = Array.from(
  { length: 2_000 },
  (_, line) => `Line ${line + 1} ${Array.from({ length: 9 }, (_, word) => `w${word}`).join(' ')}`,
).join('\n');

async function uploadDocument(threadId: string): Promise<Attachment> {
  const bytes = new TextEncoder().encode(longText) as Uint8Array<ArrayBuffer>;
  const response = await upload(client, threadId, bytes, 'report.txt', 'text/plain');
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { attachment: Attachment }).attachment;
}

/** The replies of a chat, oldest first. */
async function replies(threadId: string): Promise<ChatMessage[]> {
  return (await client.detail(threadId)).messages.filter((message) => message.role === 'assistant');
}

/** How many lines the reply says were read (`lines 1-N of 2,000 were read`). */
function linesRead(reply: string): number {
  const match = /report\.txt, lines 1-([\d,]+) of 2,000 were read/.exec(reply);
  expect(match, reply).not.toBeNull();
  return Number(match?.[1]?.replace(',', ''));
}

describe('documents within the window of the model the call runs on (D1)', () => {
  it('gives a 2,000-token model no more of a document than its window leaves, with a note of what was read', async () => {
    const threadId = await client.createThread();
    expect((await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model: 'small' })).status).toBe(
      200,
    );
    const document = await uploadDocument(threadId);
    const response = await sendWithImages(client, threadId, 'summarize it', [document.id]);
    expect(response.status).toBe(200);
    const read = linesRead(textOfChunks(await readChunks(response)));
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(200);

    const [reply] = await replies(threadId);
    expect(reply?.metadata.model).toBe('small');
    expect(reply?.metadata.usage?.inputTokens).toBeLessThanOrEqual(2_000);
    const sent = (await client.detail(threadId)).messages.find((message) => message.role === 'user');
    expect(sent?.metadata.documents?.[0]?.cut).toEqual({ read, of: 2_000, unit: 'lines' });
  });

  it('gives a queued message the budget of the model it runs on, not of the one picked when it was queued', async () => {
    const threadId = await client.createThread();
    await client.json('PATCH', `/api/threads/${threadId}`, { model: 'small' });
    const document = await uploadDocument(threadId);
    const running = await client.send(threadId, 'slow [[words:40]] [[delay:20]]');
    expect(running.status).toBe(200);
    const queued = await sendWithImages(client, threadId, 'summarize it', [document.id]);
    expect(queued.status).toBe(202);
    // The person picks the larger model while the message waits.
    expect((await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model: 'large' })).status).toBe(
      200,
    );
    await readChunks(running);

    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`, {});
    expect(claim.status).toBe(200);
    const read = linesRead(textOfChunks(await readChunks(claim)));
    const reply = (await replies(threadId)).at(-1);
    expect(reply?.metadata.model).toBe('large');
    const input = reply?.metadata.usage?.inputTokens ?? 0;
    // More than the small model could hold, within the large one's window.
    expect(input).toBeGreaterThan(2_000);
    expect(input).toBeLessThanOrEqual(16_000);
    expect(read).toBeGreaterThan(200);
    expect(read).toBeLessThan(2_000);
  });
});
