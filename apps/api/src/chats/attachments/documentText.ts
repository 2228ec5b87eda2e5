import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { refusalMessages } from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import type { UploadSlots } from '../../platform/uploadSlots';

/**
 * What reading a document gave: a PDF's pages, a Word document's text, a text's counts, or why it
 * could not be read.
 */
export type DocumentRead =
  | { ok: true; pages: string[] }
  | { ok: true; text: string }
  | { ok: true; words: number; lines: number }
  | { ok: false; reason: 'pages'; pages: number }
  /** Not text: invalid UTF-8 or a NUL byte (the caller refuses the file as not a document). */
  | { ok: false; reason: 'binary' }
  /** A Word document's zip: unpacks past its bound, holds too many parts, or is no Word document. */
  | { ok: false; reason: 'unpacked' | 'parts' | 'notDocx' }
  | { ok: false; reason: 'unreadable' | 'timeout' | 'memory' | 'text' };

export type DocumentKind = 'pdf' | 'docx' | 'text';

export interface DocumentReadLimits {
  /** Wall-clock time one reading may take; its CPU time is bounded by the kernel to the same. */
  timeoutMs: number;
  /** Memory one reading may use beyond what Node itself reserves (the kernel's address-space limit). */
  memoryMb: number;
  maxPages: number;
  /** Most characters of text kept from one PDF or Word document (a few bytes can expand to a lot of text). */
  maxChars: number;
  /** Most parts of a Word document's zip, and most bytes they unpack to together. */
  maxDocxParts: number;
  maxDocxUnpackedBytes: number;
}

/**
 * Reading time left to one request (an import's documents together): each reading is bounded to
 * what is left, and a request past it is refused.
 */
export class ReadBudget {
  constructor(public remainingMs: number) {}
}

const READER = new URL('./documentReader.mjs', import.meta.url);

/**
 * Address space Node reserves before it runs any code (V8's code range and tables, thread stacks,
 * malloc arenas), with the reader's flags below: about 1.13 GB measured on Node 24, whose reading of
 * a 500-page PDF peaks at 1.2 GB. The limit is this plus the configured working memory.
 */
const NODE_RESERVED_MB = 1280;

/**
 * Reads documents' text in processes of their own under limits the kernel enforces (ADR-036): an
 * address-space limit (`ulimit -v`, RLIMIT_AS) and a CPU-time limit (`ulimit -t`, RLIMIT_CPU),
 * with a wall-clock kill beside them. Whatever a file holds (any filter, encoding or structure), a
 * reading that grows past its memory or runs past its time ends its own process, and the file is
 * refused with the reason; the API's memory and event loop never carry it. Readings wait for a
 * slot in a pool as fair as the uploads' (one account's line never holds back another's), and a
 * reading whose request is gone is ended at once.
 */
export class DocumentReader {
  constructor(
    private readonly limits: DocumentReadLimits,
    private readonly slots: UploadSlots,
  ) {}

  /**
   * The text of `bytes` read as `kind`. Rejects when `signal` aborts (the reading's process is
   * killed), past the pool's line (`429`/`503`), and when `budget` has no time left.
   */
  async read(
    accountId: string,
    kind: DocumentKind,
    bytes: Uint8Array,
    options: { signal?: AbortSignal; budget?: ReadBudget } = {},
  ): Promise<DocumentRead> {
    const { signal, budget } = options;
    signal?.throwIfAborted();
    const release = await this.slots.acquire(accountId, signal);
    try {
      const allowedMs = Math.min(this.limits.timeoutMs, budget?.remainingMs ?? Number.POSITIVE_INFINITY);
      if (allowedMs <= 0) throw readBudgetSpent();
      const started = performance.now();
      const read = await readInChild(kind, bytes, this.limits, allowedMs, signal);
      if (budget) {
        budget.remainingMs -= performance.now() - started;
        if (read.ok === false && read.reason === 'timeout' && allowedMs < this.limits.timeoutMs)
          throw readBudgetSpent();
      }
      return read;
    } finally {
      release();
    }
  }
}

const readBudgetSpent = () => new ApiError('too_large', refusalMessages.too_large.readingTime);

/** Most bytes of the reader's answer: its text as JSON (at worst six bytes a character) and room. */
const answerBound = (maxChars: number) => maxChars * 6 + 1024 * 1024;

function readInChild(
  kind: DocumentKind,
  bytes: Uint8Array,
  limits: DocumentReadLimits,
  allowedMs: number,
  signal: AbortSignal | undefined,
): Promise<DocumentRead> {
  return new Promise((resolve, reject) => {
    const addressSpaceKb = (NODE_RESERVED_MB + limits.memoryMb) * 1024;
    const cpuSeconds = Math.max(1, Math.ceil(allowedMs / 1000));
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        // The limits are set by the shell on itself, then kept by the reader it becomes.
        'ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@"',
        'sh',
        String(addressSpaceKb),
        String(cpuSeconds),
        process.execPath,
        `--max-old-space-size=${Math.max(32, Math.floor(limits.memoryMb / 2))}`,
        // Fewer helper threads and malloc arenas: Node's reserved address space then does not
        // grow with the machine's cores, so the same limit means the same working memory anywhere.
        '--v8-pool-size=2',
        fileURLToPath(READER),
        JSON.stringify({
          kind,
          maxPages: limits.maxPages,
          maxChars: limits.maxChars,
          maxParts: limits.maxDocxParts,
          maxUnpackedBytes: limits.maxDocxUnpackedBytes,
        }),
      ],
      // Nothing of the API's environment (secrets, database address) reaches the reader.
      { env: { MALLOC_ARENA_MAX: '2' }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let settled = false;
    let timedOut = false;
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = '';
    const bound = answerBound(limits.maxChars);
    const finish = (result: DocumentRead | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, allowedMs);
    const onAbort = () => finish(signal?.reason ?? new Error('the request went away'));
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (data: Buffer) => {
      outBytes += data.byteLength;
      if (outBytes > bound) return finish({ ok: false, reason: 'text' });
      out.push(data);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (data: string) => {
      errTail = (errTail + data).slice(-4096);
    });
    // The reader may die before it has taken all the bytes: its answer says why, not the pipe.
    child.stdin.on('error', () => {});
    child.on('error', (error) => finish(error));
    child.on('close', (code, exitSignal) => {
      const answer = Buffer.concat(out).toString('utf8');
      if (code === 0 && answer.endsWith('\n')) {
        try {
          return finish(JSON.parse(answer) as DocumentRead);
        } catch {
          return finish({ ok: false, reason: 'unreadable' });
        }
      }
      finish({ ok: false, reason: deathReason(timedOut, exitSignal, errTail) });
    });
    child.stdin.end(bytes);
  });
}

/** Why a reader ended without an answer: its time, its memory, or the file. */
function deathReason(
  timedOut: boolean,
  exitSignal: NodeJS.Signals | null,
  errTail: string,
): 'timeout' | 'memory' | 'unreadable' {
  if (timedOut || exitSignal === 'SIGXCPU') return 'timeout';
  if (/out of memory|bad_alloc|allocation failed|Cannot allocate|reserve virtual memory/i.test(errTail))
    return 'memory';
  // Under an address-space limit a failed reservation aborts or traps the process.
  if (
    exitSignal === 'SIGABRT' ||
    exitSignal === 'SIGTRAP' ||
    exitSignal === 'SIGSEGV' ||
    exitSignal === 'SIGBUS'
  )
    return 'memory';
  return 'unreadable';
}
