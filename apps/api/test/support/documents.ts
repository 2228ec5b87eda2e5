import { once } from 'node:events';
import { constants, createBrotliCompress, createDeflate } from 'node:zlib';

/**
 * Small PDFs built in the test (no fixture files, no network): each page's text in short lines, with a
 * correct cross-reference table, so any reader takes them.
 */
export function pdfBytes(pages: readonly string[]): Uint8Array<ArrayBuffer> {
  return pdfOf(
    pages.map((text) => {
      // Short lines, one text-showing operator each, moving down the page as a writer would.
      const lines = (text.match(/.{1,60}(\s|$)/g) ?? [text]).map((line) => line.trim());
      const shown = lines.map((line) => `(${line.replace(/[()\\]/g, '\\$&')}) Tj T*`).join(' ');
      return { stream: `BT /F1 10 Tf 14 TL 72 740 Td ${shown} ET` };
    }),
  );
}

/**
 * A "PDF bomb": a few hundred kilobytes whose one page's content stream inflates to `inflatedMb`
 * megabytes of text-showing operators. Compressed as a stream, so building it stays small too.
 */
export async function pdfBomb(inflatedMb: number): Promise<Uint8Array<ArrayBuffer>> {
  const line = Buffer.from('(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) Tj\n');
  const chunk = Buffer.concat(Array.from({ length: Math.ceil((1024 * 1024) / line.length) }, () => line));
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (data: Buffer) => out.push(data));
  const ended = once(deflate, 'end');
  deflate.write('BT /F1 12 Tf 72 720 Td\n');
  for (let mb = 0; mb < inflatedMb; mb++) {
    if (!deflate.write(chunk)) await once(deflate, 'drain');
  }
  deflate.end('ET');
  await ended;
  return pdfOf([{ stream: Buffer.concat(out), filter: 'FlateDecode' }]);
}

/** How a page's content stream is written: its filter, how it names it, the line after `stream`. */
interface PageStream {
  stream: string | Buffer;
  filter?: string;
  /** The filter's name in an object of its own (`/Filter 7 0 R`), not in the stream's dictionary. */
  indirectFilter?: boolean;
  /** What ends the `stream` keyword's line: `\n` (the default), `\r\n` or a lone `\r`. */
  streamEol?: string;
}

/** The kinds of hostile PDF the reader must survive: each a small file whose content expands far. */
export const HOSTILE_PDF_KINDS = ['flate-cr', 'flate-indirect', 'lzw', 'brotli'] as const;
export type HostilePdfKind = (typeof HOSTILE_PDF_KINDS)[number];

/**
 * A small PDF whose one content stream decodes to `expandedMb` megabytes of blanks (which a reader
 * skips cheaply, keeping them all decoded), each kind by a path a pattern-matching guard missed:
 * Flate after a `stream` line ended by a lone CR, Flate named through an indirect `/Filter`, LZW,
 * Brotli. Built here, streamed, so the test machine never holds the expanded content.
 */
export async function hostilePdf(kind: HostilePdfKind, expandedMb: number): Promise<Uint8Array<ArrayBuffer>> {
  if (kind === 'lzw') return pdfOf([{ stream: lzwOfBlanks(expandedMb * 1024 * 1024), filter: 'LZWDecode' }]);
  const compressor =
    kind === 'brotli'
      ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })
      : createDeflate({ level: 6 });
  const out: Buffer[] = [];
  compressor.on('data', (data: Buffer) => out.push(data));
  const ended = once(compressor, 'end');
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  compressor.write('BT ');
  for (let mb = 0; mb < expandedMb; mb++) {
    if (!compressor.write(chunk)) await once(compressor, 'drain');
  }
  compressor.end(' ET');
  await ended;
  const stream = Buffer.concat(out);
  if (kind === 'brotli') return pdfOf([{ stream, filter: 'BrotliDecode' }]);
  if (kind === 'flate-cr') return pdfOf([{ stream, filter: 'FlateDecode', streamEol: '\r' }]);
  return pdfOf([{ stream, filter: 'FlateDecode', indirectFilter: true }]);
}

/**
 * LZW codes (as PDF's LZWDecode reads them, early change on) for at least `bytes` blanks: each code
 * names the entry the previous one made one longer, up to the table's last (3,839 blanks), which
 * then repeats: a few hundred kilobytes for a gigabyte.
 */
function lzwOfBlanks(bytes: number): Buffer {
  const out: number[] = [];
  let bits = 0;
  let held = 0;
  const write = (code: number, width: number) => {
    held = (held << width) | code;
    bits += width;
    while (bits >= 8) {
      bits -= 8;
      out.push((held >>> bits) & 0xff);
    }
    held &= (1 << bits) - 1;
  };
  let width = 9;
  let next = 258;
  let written = 0;
  let first = true;
  for (let code = 0x20; written < bytes; ) {
    write(code, width);
    written += code < 256 ? 1 : code - 256;
    if (!first && next < 4096) {
      next += 1;
      if (((next + 1) & next) === 0) width = Math.min(Math.log2(next + 1) + 1, 12);
    }
    first = false;
    code = next < 4096 ? next : 4095;
  }
  write(257, width); // end of data
  if (bits > 0) out.push((held << (8 - bits)) & 0xff);
  return Buffer.from(out);
}

function pdfOf(pages: ReadonlyArray<PageStream>): Uint8Array<ArrayBuffer> {
  const objects: Buffer[] = [];
  const pageIds = pages.map((_, index) => 4 + index * 2);
  objects[1] = Buffer.from('<< /Type /Catalog /Pages 2 0 R >>');
  objects[2] = Buffer.from(
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
  );
  objects[3] = Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  pages.forEach(({ stream, filter, indirectFilter, streamEol = '\n' }, index) => {
    const data = typeof stream === 'string' ? Buffer.from(stream, 'latin1') : stream;
    objects[4 + index * 2] = Buffer.from(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + index * 2} 0 R >>`,
    );
    let named = filter ? ` /Filter /${filter}` : '';
    if (filter && indirectFilter) {
      const filterId = 4 + pages.length * 2 + index;
      objects[filterId] = Buffer.from(`/${filter}`);
      named = ` /Filter ${filterId} 0 R`;
    }
    objects[5 + index * 2] = Buffer.concat([
      Buffer.from(`<< /Length ${data.length}${named} >>\nstream${streamEol}`),
      data,
      Buffer.from('\nendstream'),
    ]);
  });
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let length = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = length;
    const object = Buffer.concat([
      Buffer.from(`${id} 0 obj\n`),
      objects[id] ?? Buffer.alloc(0),
      Buffer.from('\nendobj\n'),
    ]);
    parts.push(object);
    length += object.length;
  }
  const xref = [`xref\n0 ${objects.length}\n0000000000 65535 f \n`];
  for (let id = 1; id < objects.length; id++)
    xref.push(`${String(offsets[id]).padStart(10, '0')} 00000 n \n`);
  xref.push(`trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`);
  parts.push(Buffer.from(xref.join('')));
  return new Uint8Array(Buffer.concat(parts));
}
