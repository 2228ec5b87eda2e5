import type { Attachment, Turn, TurnQueue } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { IMAGE_NOT_AVAILABLE } from '../src/chats/attachments/modelContext';
import { sweepUnsentAttachments } from '../src/chats/attachments/sweep';
import { type ApiClient, readChunks, textOfChunks } from './support/client';
import { gifBytes, jpegBytes, pngBytes, sendWithImages, upload, uploaded, webpBytes } from './support/images';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

type Refusal = { error: { code: string; message: string } };

async function replyOf(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return textOfChunks(await readChunks(response));
}

async function countRows(
  table: 'attachments' | 'attachment_blobs' | 'chat_turn_requests',
  threadId?: string,
) {
  const sql = api.runtime.database.sql;
  if (table === 'attachment_blobs') {
    const [row] = await sql<{ count: number }[]>`
      select count(*)::int as count from attachment_blobs b join attachments a on a.id = b.attachment_id
      where ${threadId ?? null}::uuid is null or a.thread_id = ${threadId ?? null}::uuid`;
    return row?.count ?? 0;
  }
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from ${sql(table)}
    where ${threadId ?? null}::uuid is null or thread_id = ${threadId ?? null}::uuid`;
  return row?.count ?? 0;
}

describe('uploading an image', () => {
  it('answers 201 with what the bytes say, whatever the name and declared type', async () => {
    const threadId = await client.createThread();
    const response = await upload(
      client,
      threadId,
      jpegBytes(1024, 768, 5000),
      'dir/holiday.png',
      'image/png',
    );
    expect(response.status).toBe(201);
    const { attachment } = (await response.json()) as { attachment: Attachment };
    expect(attachment).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'holiday.png',
      mediaType: 'image/jpeg',
      size: 5000,
      width: 1024,
      height: 768,
    });
  });

  it('refuses a renamed executable with 415 unsupported_media_type and stores nothing', async () => {
    const threadId = await client.createThread();
    const elf = new Uint8Array(4096);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01]);
    const response = await upload(client, threadId, elf, 'cute-cat.png', 'image/png');
    expect(response.status).toBe(415);
    expect(((await response.json()) as Refusal).error.code).toBe('unsupported_media_type');
    expect(await countRows('attachments', threadId)).toBe(0);
  });

  it('refuses an image whose header claims more than 16384 px a side or 50 megapixels, for every kind, storing nothing', async () => {
    const threadId = await client.createThread();
    const claims: Array<[string, Uint8Array<ArrayBuffer>]> = [
      ['png past 2^31-1', pngBytes(0xffffffff, 1)],
      ['png 2^31-1 square', pngBytes(2147483647, 2147483647)],
      ['png a side too wide', pngBytes(16385, 10)],
      ['png too many pixels', pngBytes(10000, 6000)],
      ['jpeg', jpegBytes(65535, 65535)],
      ['webp 2^24 square in 30 bytes', webpBytes(16777216, 16777216)],
      ['webp a side too tall', webpBytes(10, 16385)],
      ['gif too many pixels', gifBytes(8000, 8000)],
    ];
    for (const [what, bytes] of claims) {
      const response = await upload(client, threadId, bytes);
      expect(response.status, what).toBe(413);
      expect(((await response.json()) as Refusal).error.code, what).toBe('too_large');
    }
    expect(await countRows('attachments', threadId)).toBe(0);
    // At the bounds an image is taken.
    const widest = await uploaded(client, threadId, pngBytes(16384, 3000));
    expect([widest.width, widest.height]).toEqual([16384, 3000]);
    expect(await countRows('attachments', threadId)).toBe(1);
  });

  it('refuses a JSON body, a missing file and a thread of someone else', async () => {
    const threadId = await client.createThread();
    const json = await client.fetch('POST', `/api/threads/${threadId}/attachments`, { file: 'x' });
    expect(json.status).toBe(415);
    const empty = new FormData();
    empty.append('note', 'no file');
    const noFile = await fetch(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
      method: 'POST',
      headers: { cookie: client.cookieHeader, origin: 'http://localhost:3000' },
      body: empty,
    });
    expect(noFile.status).toBe(400);
    const stranger = await api.client();
    const foreign = await upload(stranger, threadId, pngBytes(10, 10));
    expect(foreign.status).toBe(404);
    // The origin check still applies to an upload.
    const form = new FormData();
    form.append('file', new File([pngBytes(10, 10)], 'a.png'));
    const crossSite = await fetch(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
      method: 'POST',
      headers: { cookie: client.cookieHeader, origin: 'https://evil.example' },
      body: form,
    });
    expect(crossSite.status).toBe(403);
    expect(await countRows('attachments', threadId)).toBe(0);
  });
});

describe('sending images', () => {
  it('sends two images; the model gets both, and memory holds references, never base64', async () => {
    const threadId = await client.createThread();
    const png = await uploaded(client, threadId, pngBytes(640, 480, 200_000), 'screen.png');
    const jpeg = await uploaded(client, threadId, jpegBytes(1024, 768, 300_000), 'photo.jpg');
    const reply = await replyOf(await sendWithImages(client, threadId, 'what is this?', [png.id, jpeg.id]));
    expect(reply).toContain('I see 2 images: png 640x480, jpeg 1024x768.');

    const rows = await api.runtime.database.sql<{ content: string }[]>`
      select content from mastra.mastra_messages where thread_id = (
        select memory_thread_id from branches where thread_id = ${threadId})`;
    const raw = rows.map((row) => row.content).join('\n');
    expect(raw).toContain(`/api/media/${png.id}`);
    expect(raw).toContain(`/api/media/${jpeg.id}`);
    expect(raw).not.toMatch(/base64|iVBORw0KGgo|\/9j\//);
    expect(raw.length).toBeLessThan(5_000);

    const detail = await client.detail(threadId);
    const files = detail.messages[0]?.parts.filter((part) => part.type === 'file');
    expect(files).toEqual([
      expect.objectContaining({
        mediaType: 'image/png',
        url: `/api/media/${png.id}`,
        filename: 'screen.png',
      }),
      expect.objectContaining({
        mediaType: 'image/jpeg',
        url: `/api/media/${jpeg.id}`,
        filename: 'photo.jpg',
      }),
    ]);
    // A later turn still sees them (inside the default window of 10 messages with images).
    const next = await replyOf(await client.send(threadId, 'and now?'));
    expect(next).toContain('(2 earlier images in context.)');
  });

  it('serves the bytes to the owner only, with the stored type, nosniff, inline, private cache and ETag', async () => {
    const threadId = await client.createThread();
    const bytes = pngBytes(32, 16, 1234);
    const image = await uploaded(client, threadId, bytes, 'tiny "x".png');
    const own = await client.fetch('GET', `/api/media/${image.id}`);
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('image/png');
    expect(own.headers.get('x-content-type-options')).toBe('nosniff');
    expect(own.headers.get('content-disposition')).toMatch(/^inline; filename\*=UTF-8''tiny%20x.png$/);
    expect(own.headers.get('cache-control')).toMatch(/^private/);
    const etag = own.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(new Uint8Array(await own.arrayBuffer())).toEqual(bytes);
    const again = await client.fetch('GET', `/api/media/${image.id}`, undefined, {
      headers: { 'if-none-match': etag ?? '' },
    });
    expect(again.status).toBe(304);

    const stranger = await api.client();
    const foreign = await stranger.fetch('GET', `/api/media/${image.id}`);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as Refusal).error.code).toBe('not_found');
    expect((await client.fetch('GET', `/api/media/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it('refuses more than 4 ids (400) and an id of another thread or user (404), changing nothing', async () => {
    const threadId = await client.createThread();
    const other = await client.createThread();
    const ids = await Promise.all(
      Array.from({ length: 5 }, async () => (await uploaded(client, threadId, pngBytes(8, 8))).id),
    );
    const tooMany = await sendWithImages(client, threadId, 'five', ids);
    expect(tooMany.status).toBe(400);
    const otherThreads = await uploaded(client, other, pngBytes(8, 8));
    const wrongThread = await sendWithImages(client, threadId, 'other thread', [otherThreads.id]);
    expect(wrongThread.status).toBe(404);
    const stranger = await api.client();
    const strangersThread = await stranger.createThread();
    const strangers = await uploaded(stranger, strangersThread, pngBytes(8, 8));
    const wrongUser = await sendWithImages(client, threadId, 'not mine', [strangers.id]);
    expect(wrongUser.status).toBe(404);
    expect(await countRows('chat_turn_requests', threadId)).toBe(0);
    const [unsent] = await api.runtime.database.sql<{ count: number }[]>`
      select count(*)::int as count from attachments where thread_id = ${threadId} and sent_at is null`;
    expect(unsent?.count).toBe(5);
  });

  it('queues an item with its images, and an edit keeps or changes them (a dropped one is deleted)', async () => {
    const threadId = await client.createThread();
    const running = await client.send(threadId, 'slow [[words:400]] [[delay:20]]');
    expect(running.status).toBe(200);
    const first = await uploaded(client, threadId, pngBytes(100, 50));
    const second = await uploaded(client, threadId, jpegBytes(30, 20));
    const queued = await sendWithImages(client, threadId, 'queued with images', [first.id, second.id]);
    expect(queued.status).toBe(202);
    const { turn } = (await queued.json()) as { turn: Turn };
    expect(turn.attachments.map((attachment) => attachment.id)).toEqual([first.id, second.id]);

    const keep = await client.json<{ turnQueue: TurnQueue }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${turn.id}`,
      {
        text: 'edited text only',
      },
    );
    expect(keep.status).toBe(200);
    expect(keep.body.turnQueue.items[0]?.attachments.map((attachment) => attachment.id)).toEqual([
      first.id,
      second.id,
    ]);
    const change = await client.json<{ turnQueue: TurnQueue }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${turn.id}`,
      {
        text: 'edited images',
        attachmentIds: [second.id],
      },
    );
    expect(change.body.turnQueue.items[0]?.attachments.map((attachment) => attachment.id)).toEqual([
      second.id,
    ]);
    expect((await client.fetch('GET', `/api/media/${first.id}`)).status).toBe(404);
    await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
    await running.text();
  });

  it('deleting the chat deletes the bytes', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(64, 64, 100_000));
    await replyOf(await sendWithImages(client, threadId, 'keep this', [image.id]));
    expect(await countRows('attachment_blobs', threadId)).toBe(1);
    const deleted = await client.fetch('DELETE', `/api/threads/${threadId}`);
    expect(deleted.status).toBeLessThan(300);
    const [left] = await api.runtime.database.sql<{ count: number }[]>`
      select count(*)::int as count from attachment_blobs where attachment_id = ${image.id}`;
    expect(left?.count).toBe(0);
  });

  it('an image whose bytes are gone reads as [image not available] to the model, and 404 to the page', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(64, 64));
    await replyOf(await sendWithImages(client, threadId, 'first look', [image.id]));
    await api.runtime.database.sql`delete from attachment_blobs where attachment_id = ${image.id}`;
    const reply = await replyOf(await client.send(threadId, 'again [[history]]'));
    expect(reply).toContain(IMAGE_NOT_AVAILABLE);
    expect(reply).not.toContain('earlier image');
    expect((await client.fetch('GET', `/api/media/${image.id}`)).status).toBe(404);
  });

  it('a new version keeps the original message images unless the edit removes them', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(640, 480));
    await replyOf(await sendWithImages(client, threadId, 'original', [image.id]));
    const [original] = (await client.detail(threadId)).messages;
    const kept = await client.fetch('POST', `/api/threads/${threadId}/messages/${original?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'edited, same image',
    });
    expect(await replyOf(kept)).toContain('I see 1 image: png 640x480.');
    const [edited] = (await client.detail(threadId)).messages;
    const removed = await client.fetch('POST', `/api/threads/${threadId}/messages/${edited?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'edited, no image',
      attachmentIds: [],
    });
    expect(await replyOf(removed)).not.toContain('I see');
  });

  it('a failed attempt keeps its images in the transcript, as references', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(12, 34));
    const response = await sendWithImages(client, threadId, 'broken [[fail]]', [image.id]);
    expect(response.status).toBe(200);
    await readChunks(response);
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.items[0]?.status).toBe('failed');
    const files = detail.messages.flatMap((message) => message.parts.filter((part) => part.type === 'file'));
    expect(files).toEqual([expect.objectContaining({ url: `/api/media/${image.id}` })]);
  });

  it('the sweep removes uploads never sent, and leaves sent ones', async () => {
    const threadId = await client.createThread();
    const sent = await uploaded(client, threadId, pngBytes(8, 8));
    const unsent = await uploaded(client, threadId, pngBytes(9, 9));
    await replyOf(await sendWithImages(client, threadId, 'one of two', [sent.id]));
    expect(await sweepUnsentAttachments(api.runtime.database.db, new Date(Date.now() - 60_000))).toBe(0);
    await sweepUnsentAttachments(api.runtime.database.db, new Date(Date.now() + 60_000));
    expect((await client.fetch('GET', `/api/media/${unsent.id}`)).status).toBe(404);
    expect((await client.fetch('GET', `/api/media/${sent.id}`)).status).toBe(200);
  });

  it('a share shows images through share-scoped URLs that stop working when it is revoked', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(20, 10));
    await replyOf(await sendWithImages(client, threadId, 'shared picture', [image.id]));
    const { body } = await client.json<{ share: { token: string } }>(
      'POST',
      `/api/threads/${threadId}/shares`,
      {},
    );
    const token = body.share.token;
    const snapshot = await (await fetch(`${api.baseUrl}/api/shares/${token}`)).text();
    const url = `/api/shares/${token}/media/${image.id}`;
    expect(snapshot).toContain(url);
    expect(snapshot).not.toContain(`/api/media/${image.id}`);
    const read = await fetch(`${api.baseUrl}${url}`);
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('image/png');
    expect(read.headers.get('cache-control')).toBe('no-store');
    const other = await uploaded(client, threadId, pngBytes(5, 5));
    expect((await fetch(`${api.baseUrl}/api/shares/${token}/media/${other.id}`)).status).toBe(404);
    expect((await client.fetch('DELETE', `/api/shares/${token}`)).status).toBe(204);
    expect((await fetch(`${api.baseUrl}${url}`)).status).toBe(404);
  });
});
