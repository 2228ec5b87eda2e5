import { readFileSync, writeFileSync } from 'node:fs';
import type { ChatExport, ThreadDetail } from '@chat/contracts';
import { expect, test } from './fixtures';
import { ChatCopies } from './pages/ChatCopies';
import { ChatPage } from './pages/ChatPage';
import { ShareDialog } from './pages/ShareDialog';
import { threadIdOf } from './pages/Sidebar';

test.describe('taking a chat anywhere (P1-P4)', () => {
  test('export as Markdown and JSON, import the JSON as a new chat with every version', async ({
    chat,
    page,
  }) => {
    const copies = new ChatCopies(page);
    const sourceUrl = await chat.startThread('Plan a picnic [[words:6]]');
    await expect(chat.lastReply()).toContainText('You said: "Plan a picnic"');
    await chat.waitForIdle();
    await chat.send('Add lemonade [[words:6]]');
    await expect(chat.lastReply()).toContainText('You said: "Add lemonade"');
    await chat.waitForIdle();
    await chat.editMessage(chat.userMessages.nth(1), 'Add iced tea [[words:6]]');
    await expect(chat.lastReply()).toContainText('You said: "Add iced tea"');
    await chat.waitForIdle();

    const markdown = await copies.export('Markdown');
    expect(markdown.suggestedFilename()).toMatch(/^Plan-a-picnic.*\.md$/);
    const text = readFileSync(await markdown.path(), 'utf8');
    expect(text).toContain('# Plan a picnic');
    expect(text).toContain('Add iced tea [[words:6]]');
    expect(text).not.toContain('Add lemonade');

    const json = await copies.export('JSON');
    expect(json.suggestedFilename()).toMatch(/\.chat\.json$/);
    const path = await json.path();
    const document = JSON.parse(readFileSync(path, 'utf8')) as ChatExport;
    expect(document.versions.length).toBe(2);

    await copies.import(path);
    expect(threadIdOf(page.url())).not.toBe(threadIdOf(sourceUrl));
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.userMessages.nth(1)).toContainText('Add iced tea');
    await expect(chat.lastReply()).toContainText('You said: "Add iced tea"');
    // Every version came along: the other one is a switch away.
    await chat.previousVersion(chat.userMessages.nth(1));
    await expect(chat.userMessages.nth(1)).toContainText('Add lemonade');
    // It is a chat like any other: it goes on.
    await chat.send('And sandwiches [[words:5]]');
    await expect(chat.lastReply()).toContainText('You said: "And sandwiches"');
  });

  test('an import that is not an export is refused with the first problem named, and nothing opens', async ({
    chat,
    page,
  }, testInfo) => {
    const copies = new ChatCopies(page);
    await chat.openStartPage();
    const path = testInfo.outputPath('not-an-export.json');
    writeFileSync(path, JSON.stringify({ format: 'something-else' }));
    const choosing = page.waitForEvent('filechooser');
    await copies.importButton.click();
    await (await choosing).setFiles(path);
    await expect(page.getByText('Could not import the chat', { exact: true })).toBeVisible();
    await expect(
      page.getByText('Invalid request body: format: Invalid input: expected "queued-turn-chat.export".', {
        exact: true,
      }),
    ).toBeVisible();
    expect(new URL(page.url()).pathname).toBe('/');
  });

  test('an import larger than any message body goes through the app (its own bound), image included', async ({
    chat,
    page,
  }, testInfo) => {
    const copies = new ChatCopies(page);
    await chat.openStartPage();
    // A PNG's header (800 x 600) and 700 KB in all: the file is past the 512 KiB of a JSON request.
    const png = Buffer.alloc(700 * 1024, 7);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    png.writeUInt32BE(800, 16);
    png.writeUInt32BE(600, 20);
    const document: ChatExport = {
      format: 'queued-turn-chat.export',
      version: 1,
      exportedAt: '2026-12-01T10:00:00.000Z',
      chat: { title: 'A photo from the trip', createdAt: '2026-12-01T09:00:00.000Z' },
      shownVersion: 'v1',
      versions: [
        {
          id: 'v1',
          parent: null,
          editOf: null,
          lastShownAt: '2026-12-01T09:00:03.000Z',
          messages: ['m1', 'm2'],
        },
      ],
      messages: [
        {
          id: 'm1',
          role: 'user',
          createdAt: '2026-12-01T09:00:01.000Z',
          parts: [
            { type: 'text', text: 'Where was this taken?' },
            { type: 'file', mediaType: 'image/png', image: 'i1', filename: 'lake.png' },
          ],
        },
        {
          id: 'm2',
          role: 'assistant',
          createdAt: '2026-12-01T09:00:02.000Z',
          parts: [{ type: 'text', text: 'By a lake, in the morning.' }],
          model: 'local',
        },
      ],
      images: [{ id: 'i1', name: 'lake.png', mediaType: 'image/png', data: png.toString('base64') }],
      notes: [],
      approvals: [],
    };
    const path = testInfo.outputPath('photo.chat.json');
    writeFileSync(path, JSON.stringify(document));
    await copies.import(path);
    await expect(chat.userMessages.first()).toContainText('Where was this taken?');
    await expect(chat.lastReply()).toContainText('By a lake, in the morning.');
    // The image is the importer's own now, served whole (its bytes are a header and filler, so the
    // page shows it as not available: the browser cannot draw it).
    const detail = (await (
      await page.request.get(`/api/threads/${threadIdOf(page.url())}`)
    ).json()) as ThreadDetail;
    const source = detail.messages[0]?.parts.find((part) => part.type === 'file')?.url;
    expect(source).toMatch(/^\/api\/media\/[0-9a-f-]{36}$/);
    const media = await page.request.get(String(source));
    expect(media.status()).toBe(200);
    expect((await media.body()).length).toBe(700 * 1024);
  });

  test('"New chat from here" copies the chat up to that message, with a link back', async ({
    chat,
    page,
  }) => {
    const copies = new ChatCopies(page);
    const sourceUrl = await chat.startThread('First question [[words:5]]');
    await chat.waitForIdle();
    await chat.send('Second question [[words:5]]');
    await expect(chat.lastReply()).toContainText('You said: "Second question"');
    await chat.waitForIdle();

    await copies.forkFrom(chat.reply(0));
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.assistantMessages).toHaveCount(1);
    await expect(chat.userMessages.first()).toContainText('First question');
    await expect(copies.forkOrigin).toContainText('Started from');
    await chat.send('A different second question [[words:12]]');
    await expect(chat.lastReply()).toContainText('You said: "A different second question"');

    // The source is as it was; the link goes back to it.
    await copies.forkOrigin.getByRole('link').click();
    await expect(page).toHaveURL(sourceUrl);
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.userMessages.nth(1)).toContainText('Second question');
  });

  test('a reader of a shared link continues the chat as their own; the owner’s chat is unchanged', async ({
    chat,
    page,
    browser,
  }) => {
    await chat.startThread('Recipe for pancakes [[words:8]]');
    await expect(chat.lastReply()).toContainText('You said: "Recipe for pancakes"');
    await chat.waitForIdle();
    const share = new ShareDialog(page);
    await share.open();
    const url = await share.createLink();
    await share.close();

    // A stranger: a browser with no session at all.
    const context = await browser.newContext();
    const reader = await context.newPage();
    await reader.goto(url);
    await expect(reader.locator('html[data-hydrated="true"]')).toBeAttached();
    await reader.getByTestId('continue-share').click();
    await expect(reader).toHaveURL(/\/chat\/[^/]+$/);
    const readerChat = new ChatPage(reader);
    await readerChat.waitUntilReady();
    await expect(readerChat.userMessages).toHaveCount(1);
    await expect(readerChat.lastReply()).toContainText('You said: "Recipe for pancakes"');
    await readerChat.send('Without eggs [[words:5]]');
    await expect(readerChat.lastReply()).toContainText('You said: "Without eggs"');
    await context.close();

    await chat.reload();
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.page.getByText('Without eggs')).toHaveCount(0);
  });
});
