import { expect, test } from './fixtures';
import { realPng } from './support/images';

/** Three images of different shapes, one larger than any screen. */
const IMAGES = [
  { name: 'wide.png', mimeType: 'image/png', buffer: realPng(2000, 1000) },
  { name: 'tall.png', mimeType: 'image/png', buffer: realPng(300, 1200) },
  { name: 'small.png', mimeType: 'image/png', buffer: realPng(64, 48) },
];

for (const viewport of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`the image viewer fits the screen, steps through the message's images and opens the original (${viewport.width}x${viewport.height})`, async ({
    chat,
    page,
  }) => {
    await page.setViewportSize(viewport);
    await chat.startThread('[[words:3]] hello');
    await chat.waitForIdle();
    await page.getByTestId('attach-input').setInputFiles(IMAGES);
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(3);
    for (const thumb of await chat.composer.getByTestId('attachment-thumb').all())
      await expect(thumb).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await chat.send('three pictures [[words:3]]');
    const images = chat.userMessages.last().getByTestId('message-image');
    await expect(images).toHaveCount(3);
    await chat.waitForIdle();

    await images.first().click();
    const viewer = page.getByRole('dialog');
    await expect(viewer).toBeVisible();
    await expect(viewer).toHaveAccessibleName('wide.png');
    const picture = viewer.getByTestId('image-viewer');
    await expect
      .poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBe(2000);
    // The whole picture is on the screen, as large as the screen allows.
    const box = await picture.boundingBox();
    expect(box).not.toBeNull();
    if (box) {
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width + 0.5);
      expect(box.y + box.height).toBeLessThanOrEqual(viewport.height + 0.5);
      expect(box.width).toBeGreaterThan(viewport.width * 0.8);
    }
    await expect(viewer.getByTestId('image-viewer-position')).toHaveText('1 / 3');
    await expect(viewer.getByRole('button', { name: 'Previous image' })).toBeDisabled();

    // The original, in a tab of its own.
    const original = viewer.getByRole('link', { name: 'Open original' });
    await expect(original).toHaveAttribute('target', '_blank');
    expect(await original.getAttribute('href')).toBe(await images.first().getAttribute('src'));

    // Keyboard arrows and the buttons step through this message's images.
    await page.keyboard.press('ArrowRight');
    await expect(viewer).toHaveAccessibleName('tall.png');
    await expect(viewer.getByTestId('image-viewer-position')).toHaveText('2 / 3');
    const tall = await picture.boundingBox();
    if (tall) expect(tall.y + tall.height).toBeLessThanOrEqual(viewport.height + 0.5);
    await viewer.getByRole('button', { name: 'Next image' }).click();
    await expect(viewer.getByTestId('image-viewer-position')).toHaveText('3 / 3');
    await expect(viewer.getByRole('button', { name: 'Next image' })).toBeDisabled();
    await page.keyboard.press('ArrowLeft');
    await expect(viewer.getByTestId('image-viewer-position')).toHaveText('2 / 3');

    await page.keyboard.press('Escape');
    await expect(viewer).toBeHidden();
  });
}
