import { once } from 'node:events';
import { createDeflate } from 'node:zlib';

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

function pdfOf(pages: ReadonlyArray<{ stream: string | Buffer; filter?: string }>): Uint8Array<ArrayBuffer> {
  const objects: Buffer[] = [];
  const pageIds = pages.map((_, index) => 4 + index * 2);
  objects[1] = Buffer.from('<< /Type /Catalog /Pages 2 0 R >>');
  objects[2] = Buffer.from(
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
  );
  objects[3] = Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  pages.forEach(({ stream, filter }, index) => {
    const data = typeof stream === 'string' ? Buffer.from(stream, 'latin1') : stream;
    objects[4 + index * 2] = Buffer.from(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + index * 2} 0 R >>`,
    );
    objects[5 + index * 2] = Buffer.concat([
      Buffer.from(`<< /Length ${data.length}${filter ? ` /Filter /${filter}` : ''} >>\nstream\n`),
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
