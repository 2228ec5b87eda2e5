import type { Attachment } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { contextMeterView, meterWithWaiting } from '../app/threadPage/views';
import { composerDocumentsView, estimatedTokens } from '../app/utils/documentReading';
import { contextOf, detail, exchange, Page, queueOf } from './support/threadFacts';

const small = { label: 'Small', documentTokens: 24_000 };
const large = { label: 'Large', documentTokens: 24_000 };

function document(name: string, words: number, pages?: number): Attachment {
  return {
    id: `id-${name}`,
    name,
    mediaType: pages === undefined ? 'text/plain' : 'application/pdf',
    size: words * 6,
    width: 0,
    height: 0,
    words,
    ...(pages === undefined ? {} : { pages }),
  };
}

describe('what the model will read of the documents in the composer (D1)', () => {
  it('warns that only the first pages of a PDF will be read by a small-window model', () => {
    // A 2,000-token window: 1,500 for the call, 500 of them taken by the chat, about 1,000 left.
    const view = composerDocumentsView({
      attachments: [document('report.pdf', 6_000, 60)],
      window: 2_000,
      used: 500,
      draft: '',
      model: small,
    });
    expect(view.tokens).toBe(1_000);
    expect(view.warnings).toEqual(['Only about pages 1-7 of 60 of report.pdf will be read by Small.']);
  });

  it('says what share of a text will be read, and that a model with no room left reads none of it', () => {
    const cut = composerDocumentsView({
      attachments: [document('report.txt', 1_000)],
      window: 2_000,
      used: 980,
      draft: 'summarize it',
      model: small,
    });
    expect(cut.warnings).toEqual([
      `Only about ${Math.floor((cut.tokens / 1_300) * 100)}% of report.txt will be read by Small.`,
    ]);
    expect(cut.warnings[0]).toMatch(/about 3\d% of report.txt/);

    const full = composerDocumentsView({
      attachments: [document('report.txt', 1_000)],
      window: 2_000,
      used: 1_600,
      draft: '',
      model: small,
    });
    expect(full).toEqual({
      tokens: 0,
      warnings: ['report.txt will not be read by Small: its window has no room left for it.'],
    });
  });

  it('says nothing of a document read whole, nor of images, and stops at the deployment budget', () => {
    const image: Attachment = {
      id: 'img',
      name: 'a.png',
      mediaType: 'image/png',
      size: 10,
      width: 4,
      height: 4,
    };
    const whole = composerDocumentsView({
      attachments: [document('notes.md', 200), image],
      window: 128_000,
      used: 2_000,
      draft: '',
      model: large,
    });
    expect(whole).toEqual({ tokens: estimatedTokens(200), warnings: [] });

    const capped = composerDocumentsView({
      attachments: [document('book.txt', 100_000)],
      window: 1_000_000,
      used: 0,
      draft: '',
      model: { label: 'Huge', documentTokens: 24_000 },
    });
    expect(capped.tokens).toBe(24_000);
  });

  it('lets the documents attached after the first share what is left', () => {
    const view = composerDocumentsView({
      attachments: [document('a.txt', 500), document('b.txt', 1_000)],
      window: 2_000,
      used: 0,
      draft: '',
      model: small,
    });
    expect(view.tokens).toBe(1_500);
    expect(view.warnings).toEqual(['Only about 65% of b.txt will be read by Small.']);
  });
});

describe('the meter counts the documents attached and waiting (C2)', () => {
  it('adds what the model will read of them to what the chat already holds', () => {
    const page = Page.opened(detail(exchange('a'), queueOf(null), [], contextOf(2_000)));
    const meter = contextMeterView(page.state);
    if (!meter) throw new Error('no meter');
    expect(meterWithWaiting(meter, 0)).toBe(meter);
    const counted = meterWithWaiting(meter, 3_000);
    expect(counted).toMatchObject({ used: 5_000, percent: 63, level: 'warn' });
    expect(counted.label).toBe(
      'Context: 5,000 of 8,000 tokens, 3,000 of them the attached documents (about)',
    );
  });
});
