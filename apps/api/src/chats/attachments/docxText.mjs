// A Word document's (DOCX's) text, read in the reading process (`documentReader.mjs`). A DOCX is a
// zip, and a zip of a few hundred kilobytes can unpack to gigabytes: its parts are counted and
// their sizes bounded from the zip's central directory before anything is unpacked, then, since
// that directory can lie, every part is unpacked once with its output counted and stopped at the
// bound. Only then does `mammoth` (which unpacks without a bound) read it, knowing what it holds;
// the process's memory and CPU limits stand behind all of this. Plain JavaScript, as its caller.
import { createInflateRaw, inflateRawSync } from 'node:zlib';
import mammoth from 'mammoth';

/** What `[Content_Types].xml` calls the main part of a Word document (not a template, no macros). */
const WORD_MAIN_PART = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_ENTRY = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * The text of a DOCX, one paragraph a line, or why it cannot be read: `unpacked` (its parts
 * unpack past `maxUnpackedBytes`), `parts` (more than `maxParts`), `notDocx` (a zip, but no Word
 * document), `text` (more than `maxChars`), `unreadable` (a damaged zip or document). `bytes` is
 * the Buffer the reader read from its stdin.
 */
export async function readDocx(bytes, { maxUnpackedBytes, maxParts, maxChars }) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const directory = readDirectory(bytes, view, maxParts);
  if (directory === 'parts') return { ok: false, reason: 'parts' };
  if (!directory) return { ok: false, reason: 'unreadable' };
  let declared = 0;
  for (const entry of directory) declared += entry.size;
  if (declared > maxUnpackedBytes) return { ok: false, reason: 'unpacked' };

  let unpacked = 0;
  let contentTypes;
  for (const entry of directory) {
    const data = entryData(bytes, view, entry);
    if (!data) return { ok: false, reason: 'unreadable' };
    const size = await unpackedSize(data, entry.method, maxUnpackedBytes - unpacked);
    if (size === undefined) return { ok: false, reason: 'unreadable' };
    if (size === 'past') return { ok: false, reason: 'unpacked' };
    unpacked += size;
    if (entry.name === '[Content_Types].xml') {
      // Within the bound, as just counted.
      contentTypes = (entry.method === STORED ? data : inflateRawSync(data)).toString('utf8');
    }
  }
  if (!contentTypes?.includes(`"${WORD_MAIN_PART}"`)) return { ok: false, reason: 'notDocx' };

  const { value } = await mammoth.extractRawText({ buffer: bytes });
  // mammoth ends each paragraph with a blank line: one paragraph a line, as the budget takes
  // a text's lines (`pieceBreak`).
  const text = value
    .replace(/\r\n?/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
  if (text.length > maxChars) return { ok: false, reason: 'text' };
  return { ok: true, text };
}

/**
 * The zip's central directory: each part's name, method, sizes and where its local entry is.
 * `parts` past `maxParts`; undefined when it is not a zip this can read (ZIP64 included: no Word
 * document within the upload bound needs it).
 */
function readDirectory(bytes, view, maxParts) {
  const lowest = Math.max(0, bytes.byteLength - 22 - 0xffff);
  let end = -1;
  for (let at = bytes.byteLength - 22; at >= lowest; at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) {
      end = at;
      break;
    }
  }
  if (end < 0) return undefined;
  const count = view.getUint16(end + 10, true);
  const size = view.getUint32(end + 12, true);
  const offset = view.getUint32(end + 16, true);
  if (count === 0xffff || offset === 0xffffffff || offset + size > end) return undefined;
  if (count > maxParts) return 'parts';
  const names = new TextDecoder('utf-8');
  const entries = [];
  let at = offset;
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || view.getUint32(at, true) !== DIRECTORY_ENTRY) return undefined;
    const nameLength = view.getUint16(at + 28, true);
    entries.push({
      method: view.getUint16(at + 10, true),
      compressed: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      local: view.getUint32(at + 42, true),
      name: names.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return entries;
}

/** A part's stored bytes, found as any zip reader finds them (after its local entry's header). */
function entryData(bytes, view, entry) {
  const at = entry.local;
  if (at + 30 > bytes.byteLength || view.getUint32(at, true) !== LOCAL_ENTRY) return undefined;
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const end = start + entry.compressed;
  if (end > bytes.byteLength) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, entry.compressed);
}

/**
 * How many bytes a part unpacks to, counted as it unpacks and never held: `past` as soon as it
 * passes `bound`, undefined when it is damaged or packed by a method no DOCX uses.
 */
function unpackedSize(data, method, bound) {
  if (method === STORED) return Promise.resolve(data.byteLength > bound ? 'past' : data.byteLength);
  if (method !== DEFLATED) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    // Counted in 1 MiB pieces: at zlib's default 16 KiB, reaching a 64 MiB bound took 4,096
    // round trips through the thread pool (about 0.4 s of wall time, 0.2 s of CPU, alone), so on a
    // busy machine a bomb met the reader's time limit before its bound; 1 MiB takes 64 (about 20-60 ms).
    const inflate = createInflateRaw({ chunkSize: 1 << 20 });
    let size = 0;
    inflate.on('data', (chunk) => {
      size += chunk.byteLength;
      if (size > bound) {
        resolve('past');
        inflate.destroy();
      }
    });
    inflate.on('end', () => resolve(size));
    inflate.on('error', () => resolve(undefined));
    inflate.end(data);
  });
}
