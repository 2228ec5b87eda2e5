import { Worker } from 'node:worker_threads';

/** What reading a PDF gave: its pages' text, or why it could not be read. */
export type PdfText =
  | { ok: true; pages: string[] }
  | { ok: false; reason: 'pages'; pages: number }
  | { ok: false; reason: 'unreadable' | 'timeout' | 'memory' | 'text' | 'bomb' };

export interface PdfReadLimits {
  /** How long the worker may take before it is ended (the PDF is then refused). */
  timeoutMs: number;
  /** The worker's heap: a PDF that needs more ends the worker, not the API. */
  maxHeapMb: number;
  maxPages: number;
  /** Most characters of text kept from one PDF (a few bytes can expand to a lot of text). */
  maxChars: number;
  /** Most bytes the PDF's compressed streams may inflate to, all together. */
  maxInflatedBytes: number;
}

const WORKER_URL = new URL('./pdfTextWorker.mjs', import.meta.url);

/**
 * A PDF's text, read once at upload in a worker thread with a heap limit and a time limit: a PDF
 * built to exhaust memory or to loop (a "PDF bomb") ends its worker, and the upload is refused with
 * the reason, while the API keeps serving. Never throws.
 */
export function readPdfText(bytes: Uint8Array, limits: PdfReadLimits): Promise<PdfText> {
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(WORKER_URL, {
      workerData: {
        bytes,
        maxPages: limits.maxPages,
        maxChars: limits.maxChars,
        maxInflatedBytes: limits.maxInflatedBytes,
      },
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxHeapMb,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
      stdout: true,
      stderr: true,
    });
    const finish = (result: PdfText) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), limits.timeoutMs);
    worker.on('message', (result: PdfText) => finish(result));
    worker.on('error', (error: Error & { code?: string }) =>
      finish({ ok: false, reason: error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'unreadable' }),
    );
    worker.on('exit', () => finish({ ok: false, reason: 'unreadable' }));
  });
}
