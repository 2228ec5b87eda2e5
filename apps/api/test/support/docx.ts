import { once } from 'node:events';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

/**
 * Word documents (DOCX) built in the test, no fixture files: a zip written here, so a test can also
 * make one that lies about its sizes or unpacks far.
 */

/** One part of a zip: its bytes deflated, and what its directory says of it. */
interface ZipPart {
  name: string;
  deflated: Buffer;
  /** The size the zip's directory (and local header) declares. */
  size: number;
  crc: number;
}

const WORD_MAIN = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="${WORD_MAIN}"/></Types>`;

const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

const DOCUMENT_OPEN =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOCUMENT_CLOSE = '</w:body></w:document>';

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function part(name: string, content: string | Buffer): ZipPart {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  return { name, deflated: deflateRawSync(bytes), size: bytes.length, crc: crc32(bytes) };
}

/** A Word document whose body holds these paragraphs, as Word writes them (runs of text). */
export function docxBytes(paragraphs: readonly string[]): Uint8Array<ArrayBuffer> {
  return zipOf(docxParts(paragraphs));
}

/** A zip of these files (no Word document among them, whatever it is called). */
export function zipBytes(files: Record<string, string>): Uint8Array<ArrayBuffer> {
  return zipOf(Object.entries(files).map(([name, content]) => part(name, content)));
}

/** A Word document whose zip holds `count` small parts besides its own. */
export function docxOfManyParts(count: number): Uint8Array<ArrayBuffer> {
  const document = docxParts(['many parts']);
  const extra = Array.from({ length: count }, (_, index) => part(`customXml/item${index}.xml`, '<a/>'));
  return zipOf([...document, ...extra]);
}

function docxParts(paragraphs: readonly string[]): ZipPart[] {
  const body = paragraphs.map(
    (text) => `<w:p><w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p>`,
  );
  return [
    part('[Content_Types].xml', CONTENT_TYPES),
    part('_rels/.rels', RELS),
    part('word/document.xml', `${DOCUMENT_OPEN}${body.join('')}${DOCUMENT_CLOSE}`),
  ];
}

/**
 * A "zip bomb" Word document: a few hundred kilobytes whose `word/document.xml` unpacks to
 * `unpackedMb` megabytes (a paragraph, then blanks, or with `paragraphs` tiny paragraphs, which a
 * reader must build a tree of). `declaredBytes`, when given, is the size its directory claims
 * instead of the true one (a lie a reader must not trust). Deflated as a stream, so building it
 * never holds the unpacked content.
 */
export async function docxBomb(
  unpackedMb: number,
  options: { declaredBytes?: number; paragraphs?: boolean } = {},
): Promise<Uint8Array<ArrayBuffer>> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (data: Buffer) => out.push(data));
  const ended = once(deflate, 'end');
  const open = `${DOCUMENT_OPEN}<w:p><w:r><w:t>boom</w:t></w:r></w:p>`;
  deflate.write(open);
  const paragraph = '<w:p><w:r><w:t>a</w:t></w:r></w:p>';
  const chunk = options.paragraphs
    ? Buffer.from(paragraph.repeat(Math.floor((1024 * 1024) / paragraph.length)).padEnd(1024 * 1024))
    : Buffer.alloc(1024 * 1024, 0x20);
  for (let mb = 0; mb < unpackedMb; mb++) {
    if (!deflate.write(chunk)) await once(deflate, 'drain');
  }
  deflate.end(DOCUMENT_CLOSE);
  await ended;
  const size = open.length + unpackedMb * 1024 * 1024 + DOCUMENT_CLOSE.length;
  return zipOf([
    part('[Content_Types].xml', CONTENT_TYPES),
    part('_rels/.rels', RELS),
    // Its checksum is not the content's: no reader gets as far as checking it.
    { name: 'word/document.xml', deflated: Buffer.concat(out), size: options.declaredBytes ?? size, crc: 0 },
  ]);
}

/** The zip format (PKWARE's APPNOTE): local entries, then the central directory, then its end. */
function zipOf(parts: readonly ZipPart[]): Uint8Array<ArrayBuffer> {
  const locals: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const { name, deflated, size, crc } of parts) {
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(8, 8); // deflated
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4); // version made by
    entry.writeUInt16LE(20, 6); // version needed
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(crc >>> 0, 16);
    entry.writeUInt32LE(deflated.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(nameBytes.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, deflated);
    directory.push(entry, nameBytes);
    offset += local.length + nameBytes.length + deflated.length;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directoryBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directoryBytes, end]));
}
