import { readStream, type Session } from '../http';
import { type Row, ratioText } from '../rows';
import { repeat, summarize } from '../stats';
import type { BenchContext } from './context';

const SHORT_TURN = 'How are you today? [[words:20]] [[delay:0]]';
const BOUNDARY = 'b';
/**
 * The flood of the report: three guests, two uploads each at a time, 9.9 MB bodies, within the
 * default limits (60 sends and uploads per account a minute: each of a guest's two upload loops
 * starts one at most every 2 s). The bench's API runs with the limits off, so the pace is kept here.
 */
const GUESTS = 3;
const UPLOADS_PER_GUEST = 2;
const UPLOAD_EVERY_MS = 2_000;
const BODY_BYTES = Math.floor(9.9 * 1024 * 1024);
const PARTS = 170_000;

/** A PNG header (what the API sniffs) and filler up to `size` bytes. */
function png(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, 640);
  view.setUint32(20, 480);
  for (let index = 24; index < size; index++) bytes[index] = (index * 2654435761) >>> 24;
  return bytes;
}

/** `fields` one-byte fields, then one image filling the body up to BODY_BYTES. */
function multipartBody(fields: number): Uint8Array<ArrayBuffer> {
  const field = Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="a"\r\n\r\nx\r\n`);
  const fileHead = Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="flood.png"\r\ncontent-type: image/png\r\n\r\n`,
  );
  const end = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const fileBytes = BODY_BYTES - fields * field.byteLength - fileHead.byteLength - end.byteLength;
  return new Uint8Array(
    Buffer.concat([...Array.from({ length: fields }, () => field), fileHead, png(fileBytes), end]),
  );
}

/**
 * A send starts at most this often, so the timed sends span several of the flood's upload cycles
 * (each loop starts an upload every 2 s) rather than a second of it.
 */
const SEND_EVERY_MS = 250;

/**
 * Short sends, one after another, paced: send -> first text delta. A send shed with `503
 * overloaded` goes again after its Retry-After as the web app's does, and the wait counts in its
 * time: that is how long the person waited for the reply to start.
 */
async function timeSends(
  session: Session,
  iterations: number,
  warmup: number,
): Promise<{ times: number[]; retries: number }> {
  let threadId = await session.createThread();
  let retries = 0;
  const times = await repeat(
    iterations,
    async (index) => {
      if (index % 10 === 0) threadId = await session.createThread();
      const startedAt = performance.now();
      const pace = new Promise((resolve) => setTimeout(resolve, SEND_EVERY_MS));
      const started = await session.sendUntilStarted(threadId, SHORT_TURN);
      retries += started.retries;
      const { firstDeltaMs } = await readStream(started.response, startedAt);
      await pace;
      return firstDeltaMs;
    },
    { warmup },
  );
  return { times, retries };
}

/**
 * Uploads `body` over and over from GUESTS guests, UPLOADS_PER_GUEST at a time each, until
 * `stop` is called; resolves with the statuses seen once every upload in flight has ended.
 */
async function flood(context: BenchContext, body: Uint8Array<ArrayBuffer>) {
  const guests = await Promise.all(Array.from({ length: GUESTS }, () => context.session.anotherGuest()));
  const threads = await Promise.all(guests.map((guest) => guest.createThread()));
  let stopped = false;
  const statuses = new Map<number, number>();
  const workers = guests.flatMap((guest, index) =>
    Array.from({ length: UPLOADS_PER_GUEST }, async () => {
      while (!stopped) {
        const pace = new Promise((resolve) => setTimeout(resolve, UPLOAD_EVERY_MS));
        const status = await guest.upload(threads[index] as string, body, BOUNDARY).catch(() => 0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        await pace;
      }
    }),
  );
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
      return statuses;
    },
  };
}

/**
 * A person's short send while others flood the API with uploads (the report's flood: six parallel
 * 9.9 MB uploads from three guests), beside the same sends on a quiet API measured just before:
 * once with forms of 170,000 parts (refused at the fifth part, the rest read and thrown away), once
 * with one-part 9.9 MB images (taken and stored).
 */
export async function measureUploadFlood(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;
  const iterations = mode.quick ? 5 : 40;
  const quiet = summarize((await timeSends(session, iterations, mode.warmup)).times);
  const rows: Row[] = [];
  const floods: Array<[string, string, number]> = [
    ['send-during-part-flood', `forms of ${PARTS.toLocaleString('en')} parts`, PARTS],
    ['send-during-image-flood', 'one-part images', 0],
  ];
  for (const [id, what, fields] of floods) {
    const running = await flood(context, multipartBody(fields));
    let sends: { times: number[]; retries: number };
    try {
      // The flood is under way before the first timed send.
      await new Promise((resolve) => setTimeout(resolve, 500));
      sends = await timeSends(session, iterations, 0);
    } finally {
      // A failed send must not leave the flood running into the next scenario (and keep the
      // bench's process alive after the report).
      const statuses = await running.stop();
      context.log(`${id}: upload answers ${JSON.stringify(Object.fromEntries(statuses))}`);
    }
    const during = summarize(sends.times);
    rows.push({
      id,
      figure: `send -> first text delta while 3 guests upload 9.9 MB ${what}, 2 at a time each`,
      unit: 'ms',
      baseline: quiet,
      app: during,
      ratio: ratioText(during, quiet),
      target: '<= 100 ms (median)',
      met: mode.quick ? undefined : during.median <= 100,
      note: `baseline: the same sends on the quiet API, just before; sends shed 503 and sent again after Retry-After: ${sends.retries}`,
    });
  }
  return rows;
}
