// Reads a PDF's text, page by page, in a worker thread of its own (`pdfText.ts` starts it with
// memory limits and ends it after a time limit): a hostile PDF can exhaust this worker, never the
// API. Plain JavaScript, so it runs the same from the sources (tests, `dev`) and beside the build.
import { parentPort, workerData } from 'node:worker_threads';
import { inflateSync } from 'node:zlib';
import { getDocumentProxy } from 'unpdf';

const { bytes, maxPages, maxChars, maxInflatedBytes } = workerData;

/**
 * Whether every Flate-compressed stream of the file inflates within `maxInflatedBytes`, all of them
 * together too. The reader keeps a decoded stream whole in buffers outside the worker's heap limit,
 * so a "bomb" (a few kilobytes inflating to gigabytes) would exhaust the process: it is measured
 * here first, with a bounded inflate that stops at the limit, and refused.
 */
function inflatesWithinBounds(pdf) {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  const streams = /stream\r?\n/g;
  let total = 0;
  let objectStart = 0;
  for (let match = streams.exec(text); match; match = streams.exec(text)) {
    if (text.startsWith('end', match.index - 3)) continue;
    const dictionary = text.slice(text.lastIndexOf(' obj', match.index) + 1 || objectStart, match.index);
    objectStart = match.index;
    const layers = dictionary.match(/\/FlateDecode\b|\/Fl\b/g)?.length ?? 0;
    if (layers === 0) continue;
    const end = text.indexOf('endstream', match.index);
    let data = Buffer.from(
      pdf.buffer,
      pdf.byteOffset + match.index + match[0].length,
      (end < 0 ? text.length : end) - match.index - match[0].length,
    );
    for (let layer = 0; layer < layers; layer++) {
      try {
        data = inflateSync(data, { maxOutputLength: maxInflatedBytes, finishFlush: 2 /* Z_SYNC_FLUSH */ });
      } catch (error) {
        if (error instanceof RangeError || error?.code === 'ERR_BUFFER_TOO_LARGE') return false;
        break; // Damaged data: the reader decides what to make of it.
      }
    }
    total += data.byteLength;
    if (total > maxInflatedBytes) return false;
  }
  return true;
}

async function read() {
  if (!inflatesWithinBounds(bytes)) return { ok: false, reason: 'bomb' };
  const pdf = await getDocumentProxy(new Uint8Array(bytes), {
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    // Warnings about fonts go nowhere: only the text is read.
    verbosity: 0,
  });
  if (pdf.numPages > maxPages) return { ok: false, reason: 'pages', pages: pdf.numPages };
  const pages = [];
  let chars = 0;
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number);
    const content = await page.getTextContent();
    let text = '';
    for (const item of content.items) {
      if (typeof item.str !== 'string') continue;
      text += item.str + (item.hasEOL ? '\n' : '');
    }
    page.cleanup();
    // A page's text never holds the separator between pages.
    text = text.replaceAll('\f', ' ').trim();
    chars += text.length;
    if (chars > maxChars) return { ok: false, reason: 'text' };
    pages.push(text);
  }
  return { ok: true, pages };
}

read().then(
  (result) => parentPort.postMessage(result),
  () => parentPort.postMessage({ ok: false, reason: 'unreadable' }),
);
