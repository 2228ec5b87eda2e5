import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfChunks } from './support/client';
import { pngBytes, sendWithImages, uploaded } from './support/images';
import { useTestApi } from './support/testApi';

let client: ApiClient;
useTestApi((started) => {
  ({ client } = started);
});

async function replyOf(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return textOfChunks(await readChunks(response));
}

describe('images and versions', () => {
  it('deleting a message keeps its image while a later version still holds a copy of it', async () => {
    const threadId = await client.createThread();
    const image = await uploaded(client, threadId, pngBytes(640, 480));
    await replyOf(await sendWithImages(client, threadId, 'first, with an image', [image.id]));
    await client.sendAndRead(threadId, 'second');
    const second = (await client.detail(threadId)).messages[2];
    // A new version of the second message: its branch holds a copy of the first, image and all.
    const edited = await client.fetch('POST', `/api/threads/${threadId}/messages/${second?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'second, edited',
    });
    await replyOf(edited);
    const version = (await client.detail(threadId)).messages[2]?.metadata?.version;
    expect(version?.count).toBe(2);
    const original = version?.branchIds[0];

    // On the original version, delete its second message, then its first (each the latest then).
    // Deleting a message that has versions shows its other version, so go back to the original
    // each time (by its branch id: the version controls no longer lead there).
    for (const index of [2, 0]) {
      const switched = await client.fetch('PUT', `/api/threads/${threadId}/active-branch`, {
        branchId: original,
      });
      expect(switched.status).toBe(200);
      const message = (await client.detail(threadId)).messages[index];
      const deleted = await client.fetch('DELETE', `/api/threads/${threadId}/messages/${message?.id}`);
      expect(deleted.status).toBe(200);
    }

    // The edited version still shows the first message with its image, and the image still loads.
    const back = await client.fetch('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: version?.branchIds[1],
    });
    expect(back.status).toBe(200);
    const detail = await client.detail(threadId);
    const firstParts = detail.messages[0]?.parts ?? [];
    expect(firstParts.some((part) => part.type === 'file')).toBe(true);
    expect(detail.messages[2]?.parts).toContainEqual(expect.objectContaining({ text: 'second, edited' }));
    expect((await client.fetch('GET', `/api/media/${image.id}`)).status).toBe(200);
  });
});
