import { describe, expect, it } from 'vitest';
import { messageDocumentChips } from '../app/utils/documents';

const pdfId = '0190a1b2-0000-7000-8000-000000000001';
const mdId = '0190a1b2-0000-7000-8000-000000000002';
const parts = [
  { type: 'text', text: 'read these' },
  { type: 'file', mediaType: 'application/pdf', url: `/api/media/${pdfId}`, filename: 'report.pdf' },
  { type: 'file', mediaType: 'text/markdown', url: `/api/media/${mdId}`, filename: 'plan.md' },
  { type: 'file', mediaType: 'image/png', url: '/api/media/0190a1b2-0000-7000-8000-000000000003' },
];

describe("a sent message's document chips", () => {
  it('show pages or size from what the message says of each, and a cut as a note of its own', () => {
    const chips = messageDocumentChips(parts, [
      { id: pdfId, size: 52_000, pages: 120, cut: { read: 40, of: 120, unit: 'pages' } },
      { id: mdId, size: 3_482 },
    ]);
    expect(chips.map(({ name, detail, cut }) => ({ name, detail, cut }))).toEqual([
      { name: 'report.pdf', detail: 'PDF · 120 pages', cut: 'Pages 1-40 of 120 were read' },
      { name: 'plan.md', detail: 'Markdown · 3.4 KB', cut: undefined },
    ]);
  });

  it("show a Word document's words (its size says little of its text), and its size while they are not known", () => {
    const docxId = '0190a1b2-0000-7000-8000-000000000004';
    const docx = [
      {
        type: 'file',
        mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        url: `/api/media/${docxId}`,
        filename: 'memo.docx',
      },
    ];
    expect(messageDocumentChips(docx, [{ id: docxId, size: 48_000, words: 1_234 }])[0]?.detail).toBe(
      'Word · 1,234 words',
    );
    expect(messageDocumentChips(docx, [{ id: docxId, size: 48_000 }])[0]?.detail).toBe('Word · 46.9 KB');
  });

  it('show the kind alone while nothing more is known, and a document not read at all as such', () => {
    expect(messageDocumentChips(parts).map((chip) => chip.detail)).toEqual(['PDF', 'Markdown']);
    const [notRead] = messageDocumentChips(parts.slice(0, 2), [
      { id: pdfId, size: 1, pages: 3, cut: { read: 0, of: 3, unit: 'pages' } },
    ]);
    expect(notRead?.cut).toBe('None of its 3 pages were read');
  });
});
