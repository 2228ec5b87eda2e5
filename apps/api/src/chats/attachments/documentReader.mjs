// Reads one document's text in a process of its own, started by `documentText.ts` under limits the
// kernel enforces (address space and CPU time, set before this process starts): whatever a file
// makes its reader do (any filter, any structure), it can exhaust this process, never the API.
// The bytes come on stdin; one JSON line goes out on stdout. Plain JavaScript, so it runs the same
// from the sources (tests, `dev`) and beside the build.
import { getDocumentProxy } from 'unpdf';
import { readDocx } from './docxText.mjs';
import { readText } from './textCounts.mjs';

const { kind, maxPages, maxChars, maxParts, maxUnpackedBytes } = JSON.parse(process.argv[2] ?? '{}');

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A PDF's pages' text, page by page; past `maxPages` pages or `maxChars` characters it stops. */
async function readPdf(bytes) {
  const pdf = await getDocumentProxy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
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

function answer(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

/** The reading of each kind of document. */
function read(bytes) {
  if (kind === 'pdf') return readPdf(bytes);
  if (kind === 'docx') return readDocx(bytes, { maxUnpackedBytes, maxParts, maxChars });
  return readText(bytes);
}

readStdin()
  .then(read)
  .then(answer, (error) =>
    // An allocation the address-space limit refused, where the reader let it surface as an error
    // (pdf.js passes it on under a name of its own, with the message kept).
    answer({
      ok: false,
      reason: /allocation failed|out of memory/i.test(String(error?.message)) ? 'memory' : 'unreadable',
    }),
  );
