import { expect, test } from './fixtures';
import { docxBytes, pdfBytes } from './support/documents';

test.describe('documents in chat', () => {
  test('a PDF and a Markdown file queue as chips in the Dock, show in the transcript, open as files, and the model read both', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:500]] [[delay:40]] first');
    await expect(chat.stopButton).toBeVisible();

    await page.getByTestId('attach-input').setInputFiles([
      {
        name: 'report.pdf',
        mimeType: 'application/pdf',
        buffer: pdfBytes(['Quarterly report', 'Revenue grew']),
      },
      {
        name: 'plan.md',
        mimeType: 'text/markdown',
        buffer: Buffer.from('# Plan\n\nShip the documents feature.\n'),
      },
    ]);
    const chips = chat.composer.getByTestId('attachment-thumb');
    await expect(chips).toHaveCount(2);
    await expect(chips.nth(0)).toHaveAttribute('data-state', 'ready');
    await expect(chips.nth(1)).toHaveAttribute('data-state', 'ready');
    await expect(chips.nth(0).getByTestId('document-detail')).toHaveText('PDF · 2 pages');
    await expect(chips.nth(1).getByTestId('document-detail')).toHaveText(/^Markdown · \d+ B$/);

    // Sent while the reply streams: it waits in the Dock with both chips.
    const question = 'summarise these [[words:30]]';
    await chat.send(question);
    await dock.expectTexts([question]);
    const queued = dock.items.first().getByTestId('document-chip');
    await expect(queued).toHaveCount(2);
    await expect(queued.nth(0)).toContainText('report.pdf');
    await expect(queued.nth(0)).toContainText('PDF · 2 pages');
    await expect(queued.nth(1)).toContainText('plan.md');
    await expect(chips).toHaveCount(0);

    // Once it ran, the transcript shows both documents, and the model says what it read.
    await expect(chat.userMessages).toHaveCount(2, { timeout: 45_000 });
    const shown = chat.userMessages.last().getByTestId('message-document');
    await expect(shown).toHaveCount(2);
    await expect(shown.nth(0)).toContainText('report.pdf');
    await expect(shown.nth(1)).toContainText('plan.md');
    // With pages or size, as in the composer and the Dock; both were read whole: no note of a cut.
    await expect(shown.nth(0).getByTestId('document-detail')).toHaveText('PDF · 2 pages');
    await expect(shown.nth(1).getByTestId('document-detail')).toHaveText(/^Markdown · \d+ B$/);
    await expect(chat.userMessages.last().getByTestId('document-cut')).toHaveCount(0);
    await expect(chat.lastReply()).toContainText(
      'I read 2 documents: report.pdf, 2 pages, 4 words; plan.md, 6 words.',
      { timeout: 30_000 },
    );

    // Each opens as the file itself in a tab of its own: the PDF inline, the text as plain text.
    await expect(shown.nth(0)).toHaveAttribute('target', '_blank');
    const pdfUrl = await shown.nth(0).getAttribute('href');
    const mdUrl = await shown.nth(1).getAttribute('href');
    const pdf = await page.request.get(pdfUrl ?? '');
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    expect(pdf.headers()['content-disposition']).toBe(`inline; filename*=UTF-8''report.pdf`);
    const markdown = await page.request.get(mdUrl ?? '');
    expect(markdown.headers()['content-type']).toBe('text/plain; charset=utf-8');
    expect(await markdown.text()).toBe('# Plan\n\nShip the documents feature.\n');
  });

  test('a document longer than the budget shows on its chip which part the model read, as the reply says', async ({
    chat,
    page,
  }) => {
    // 5,000 lines of ten words: far more than the 8,000-token model's window leaves for documents.
    const lines = Array.from(
      { length: 5_000 },
      (_, index) => `line ${index + 1} alpha beta gamma delta epsilon zeta eta theta`,
    );
    await chat.startThread('hello [[words:3]]');
    await page
      .getByTestId('attach-input')
      .setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(lines.join('\n')) }]);
    const chip = chat.composer.getByTestId('attachment-thumb');
    await expect(chip).toHaveAttribute('data-state', 'ready');
    await chat.send('what do my notes say? [[words:40]]');

    await expect(chat.userMessages).toHaveCount(2, { timeout: 30_000 });
    const reply = chat.lastReply();
    await expect(reply).toContainText(/lines 1-[\d,]+ of 5,000 were read/, { timeout: 30_000 });
    const said = /lines 1-([\d,]+) of 5,000 were read/.exec((await reply.textContent()) ?? '')?.[1];
    const shown = chat.userMessages.last().getByTestId('message-document');
    await expect(shown.getByTestId('document-detail')).toHaveText(/^Text · \d+\.\d KB$/);
    await expect(shown.getByTestId('document-cut')).toHaveText(`Lines 1-${said} of 5,000 were read`);
  });

  test('a Word document attaches from the picker, its chip says its words, it downloads as itself, and the model read it', async ({
    chat,
    page,
  }) => {
    await chat.startThread('hello [[words:3]]');
    await expect(chat.stopButton).toBeHidden({ timeout: 20_000 });
    // The picker offers Word documents.
    expect(await page.getByTestId('attach-input').getAttribute('accept')).toContain('.docx');
    await page.getByTestId('attach-input').setInputFiles({
      name: 'memo.docx',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      buffer: docxBytes(['Quarterly memo', 'Revenue grew and costs fell.']),
    });
    const chip = chat.composer.getByTestId('attachment-thumb');
    await expect(chip).toHaveAttribute('data-state', 'ready');
    await expect(chip).toHaveAttribute('data-kind', 'document');
    await expect(chip.getByTestId('document-detail')).toHaveText('Word · 7 words');

    await chat.send('what does the memo say? [[words:20]]');
    await expect(chat.userMessages).toHaveCount(2, { timeout: 30_000 });
    const shown = chat.userMessages.last().getByTestId('message-document');
    await expect(shown).toContainText('memo.docx');
    await expect(shown.getByTestId('document-detail')).toHaveText('Word · 7 words');
    await expect(chat.lastReply()).toContainText('I read 1 document: memo.docx, 7 words.', {
      timeout: 30_000,
    });

    // No browser shows a Word document: it downloads, as the file itself.
    const file = await page.request.get((await shown.getAttribute('href')) ?? '');
    expect(file.headers()['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(file.headers()['content-disposition']).toBe(`attachment; filename*=UTF-8''memo.docx`);
  });
});
