import type { ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { readChunks, textOfChunks, textOfMessage } from './support/client';
import { jpegBytes, pngBytes, sendWithImages, uploaded } from './support/images';
import { startTestApi, type TestApi, useTestApi } from './support/testApi';

/**
 * What the model sees of images (a window of recent messages with images; older ones as a note),
 * and what thread detail costs for a chat full of large images. Each test runs on an API whose
 * window is one message, beside the file's own.
 */

let api: TestApi;
useTestApi((started) => {
  ({ api } = started);
});

async function replyOf(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return textOfChunks(await readChunks(response));
}

describe('the model context window', () => {
  it('an image older than the window reaches the model as a note naming it', async () => {
    const narrow = await startTestApi(api.runtime.database.url, { ATTACHMENT_CONTEXT_MESSAGES: '1' });
    try {
      const person = await narrow.client();
      const threadId = await person.createThread();
      const old = await uploaded(person, threadId, pngBytes(640, 480), 'old.png');
      await replyOf(await sendWithImages(person, threadId, 'first', [old.id]));
      const recent = await uploaded(person, threadId, jpegBytes(1024, 768), 'new.jpg');
      const reply = await replyOf(await sendWithImages(person, threadId, 'second [[history]]', [recent.id]));
      expect(reply).toContain('I see 1 image: jpeg 1024x768.');
      expect(reply).toContain('[earlier image, not shown: old.png (png 640x480)]');
      expect(reply).not.toContain('earlier image in context');
    } finally {
      await narrow.close();
    }
  });

  it('a chat with 40 images of 5 MB answers detail in well under 100 KB', async () => {
    const narrow = await startTestApi(api.runtime.database.url, { ATTACHMENT_CONTEXT_MESSAGES: '1' });
    try {
      const person = await narrow.client();
      const threadId = await person.createThread();
      for (let message = 0; message < 10; message++) {
        const ids: string[] = [];
        for (let image = 0; image < 4; image++) {
          ids.push((await uploaded(person, threadId, pngBytes(4000, 3000, 5 * 1024 * 1024))).id);
        }
        await replyOf(await sendWithImages(person, threadId, `photos ${message}`, ids));
      }
      const response = await person.fetch('GET', `/api/threads/${threadId}`);
      const raw = await response.text();
      const detail = JSON.parse(raw) as ThreadDetail;
      const files = detail.messages.flatMap((message) =>
        message.parts.filter((part) => part.type === 'file'),
      );
      expect(files).toHaveLength(40);
      expect(raw.length).toBeLessThan(100 * 1024);
      expect(textOfMessage(detail.messages.at(-1))).toContain('I see 4 images');
    } finally {
      await narrow.close();
    }
  }, 180_000);
});
