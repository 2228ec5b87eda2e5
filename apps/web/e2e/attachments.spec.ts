import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { realPng } from './support/images';

/** Pastes an image file into the composer's text box, as a screenshot paste does. */
async function pasteImage(page: Page, name: string, bytes: Buffer): Promise<void> {
  await page
    .getByTestId('composer')
    .locator('textarea')
    .evaluate(
      (textarea, { name, data }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(data)], name, { type: 'image/png' }));
        textarea.dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }),
        );
      },
      { name, data: [...bytes] },
    );
}

test.describe('images in chat', () => {
  test('a pasted image queues with its thumbnail, shows in the transcript once it ran, and loads lazily after a reload', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:500]] [[delay:40]] first');
    await expect(chat.stopButton).toBeVisible();

    await pasteImage(page, 'screenshot.png', realPng(64, 48));
    const thumb = chat.composer.getByTestId('attachment-thumb');
    await expect(thumb).toHaveAttribute('data-state', 'ready');

    // Sent while the reply streams: it waits in the Dock with its thumbnail.
    // A long reply to it: a chat opens at its latest message, so after a reload the image, above
    // that reply, is far out of view.
    const question = 'what is in this picture? [[words:2500]] [[delay:0]]';
    await chat.send(question);
    await dock.expectTexts([question]);
    const queuedThumb = dock.items.first().getByTestId('attachment-thumb').locator('img');
    await expect(queuedThumb).toBeVisible();
    await expect.poll(() => queuedThumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64);
    await expect(thumb).toHaveCount(0);

    // Once it ran, the transcript shows the image and the model saw its bytes.
    await expect(chat.userMessages).toHaveCount(2, { timeout: 45_000 });
    await expect(chat.userMessages.last().getByTestId('message-image')).toBeVisible();
    await expect(chat.lastReply()).toContainText('I see 1 image: png 64x48.', { timeout: 30_000 });
    await expect(chat.stopButton).toBeHidden({ timeout: 30_000 });

    // After a reload the image is not fetched until it is scrolled to.
    const mediaRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/media/')) mediaRequests.push(request.url());
    });
    await chat.reload();
    const image = chat.userMessages.last().getByTestId('message-image');
    await expect(image).toHaveAttribute('loading', 'lazy');
    await expect(chat.lastReply()).toContainText('I see 1 image');
    await page.waitForTimeout(1000);
    expect(mediaRequests).toEqual([]);
    // Scrolled to as a person does (a chat pinned at its latest message lets go on the wheel).
    await chat.transcript.hover();
    const inView = async () => ((await image.boundingBox())?.y ?? -1) > 0;
    for (let step = 0; step < 20 && !(await inView()); step++) {
      await page.mouse.wheel(0, -1500);
      await page.waitForTimeout(100);
    }
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64);

    // It opens larger on click.
    await image.click();
    await expect(page.getByTestId('image-viewer')).toBeVisible();
  });

  test('a file that is neither an image nor a document is refused with a clear error, and nothing is sent with it', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:3]] hello');
    await expect(chat.stopButton).toBeHidden({ timeout: 20_000 });
    // Binary bytes (a NUL, not UTF-8) under an image's name: no image, no PDF, no text.
    await page.getByTestId('attach-input').setInputFiles({
      name: 'notes.png',
      mimeType: 'image/png',
      buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0xff, 0xfe]),
    });
    await expect(page.getByTestId('attachment-error')).toContainText(
      'Only PNG, JPEG, WebP and GIF images, PDFs, Word documents (.docx) and text files (Markdown, CSV, JSON, code) can be attached.',
    );
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveAttribute('data-state', 'error');
  });

  test("dragging a file across the composer's own parts keeps one drop highlight until it leaves the composer", async ({
    chat,
    page,
  }) => {
    await chat.openStartPage();
    const attach = chat.composer.getByTestId('attach');
    await chat.dragFileAcross(null, chat.composer);
    await expect(chat.composer).toHaveAttribute('data-drop-highlight', 'true');

    // Into the text box, then onto the attach button: each step leaves a child of the composer
    // for another, and the highlight stays (a dragleave per child once turned it off between
    // dragovers: it flickered).
    await chat.dragFileAcross(chat.composer, chat.composerInput);
    await page.waitForTimeout(200);
    await expect(chat.composer).toHaveAttribute('data-drop-highlight', 'true');
    await chat.dragFileAcross(chat.composerInput, attach);
    await page.waitForTimeout(200);
    await expect(chat.composer).toHaveAttribute('data-drop-highlight', 'true');

    // Out of the composer: the highlight goes, and nothing was attached.
    await chat.dragFileAcross(attach, null);
    await expect(chat.composer).not.toHaveAttribute('data-drop-highlight');
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);

    // Dragged text is the message box's to take, not a drop of files: no highlight.
    await chat.dragFileAcross(null, chat.composerInput, 'text');
    await page.waitForTimeout(200);
    await expect(chat.composer).not.toHaveAttribute('data-drop-highlight');
  });
});
