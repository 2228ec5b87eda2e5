import { type Database, schema } from '@chat/db';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { H3Event } from 'h3';
import { ApiError } from './errors';
import type { Logger } from './logger';

/**
 * What is counted: per IP for guest accounts and password attempts, per account for threads and
 * sends; failed sign-ins per (email, address) and per email (`auth/signInFailures.ts`).
 */
export type RateLimitRule =
  | 'guests'
  | 'signIns'
  | 'threads'
  | 'sends'
  | 'failedSignIns'
  | 'failedSignInsPerEmail';

export interface RateLimitOptions {
  /** Requests allowed per window and key; 0 turns a rule off. */
  limits: Record<RateLimitRule, number>;
  windowMs: number;
}

/** One key's count in its current window, and when the window ends. */
export interface RateWindow {
  count: number;
  /** Milliseconds until the window ends. */
  resetsInMs: number;
}

/**
 * Fixed-window request counters in PostgreSQL (`rate_limit_windows`), so the limits hold across
 * every API instance on the database: N instances allow what one does. Each counted request is
 * one statement (an upsert that starts a new window when the old one has ended); windows are
 * timed by the database's clock, which all instances share. Ended windows are swept now and then.
 * Turns running at once per account are capped in the claim itself (`turns/claim/claim.ts`).
 */
export class RateLimiter {
  constructor(
    private readonly db: Database,
    private readonly options: RateLimitOptions,
  ) {}

  /** Counts one request of `key` under `rule`; past the limit, `429 rate_limited` with Retry-After. */
  async hit(rule: RateLimitRule, key: string): Promise<void> {
    if (this.limit(rule) <= 0) return;
    const window = await this.add(rule, key);
    if (window.count > this.limit(rule)) throw rateLimited(Math.ceil(window.resetsInMs / 1000));
  }

  /** The requests allowed per window under `rule`; 0 when the rule is off. */
  limit(rule: RateLimitRule): number {
    return this.options.limits[rule];
  }

  /** `key`'s count under `rule` in its current window (0 when none runs). */
  async window(rule: RateLimitRule, key: string): Promise<RateWindow> {
    return (await readRateWindow(this.db, rule, key)) ?? { count: 0, resetsInMs: 0 };
  }

  /** Counts one of `key` under `rule` without refusing anything (the caller decides). */
  async add(rule: RateLimitRule, key: string): Promise<RateWindow> {
    return await countInWindow(this.db, rule, key, this.options.windowMs);
  }

  /** Forgets what was counted of `key` under `rule`. */
  async reset(rule: RateLimitRule, key: string): Promise<void> {
    await deleteRateWindow(this.db, rule, key);
  }

  /** Removes the windows that have ended. */
  async sweep(): Promise<void> {
    await deleteEndedRateWindows(this.db);
  }

  /**
   * Sweeps ended windows every `intervalMs` (a failure is logged; the next round tries again).
   * Returns the stop.
   */
  startSweeping(intervalMs: number, logger: Logger): () => void {
    const timer = setInterval(() => {
      this.sweep().catch((error: unknown) => logger.warn({ err: error }, 'rate limit sweep failed'));
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

export function rateLimited(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, retryAfterSeconds);
  return new ApiError('rate_limited', undefined, { retryAfter: seconds }, { 'retry-after': String(seconds) });
}

/**
 * The address a request came from: the socket's peer, or, when that peer is a trusted proxy (the
 * web app's, on loopback by default), the nearest X-Forwarded-For entry that is not a trusted
 * proxy. Entries a client wrote itself sit further left and are never reached.
 */
export function clientAddress(event: H3Event, trustedProxies: ReadonlySet<string>): string {
  const peer = normalize(event.req.ip ?? '');
  if (!trustedProxies.has(peer)) return peer || 'unknown';
  const forwarded = (event.req.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((entry) => normalize(entry.trim()))
    .filter((entry) => entry !== '');
  let address = peer;
  for (let index = forwarded.length - 1; index >= 0; index--) {
    address = forwarded[index] as string;
    if (!trustedProxies.has(address)) break;
  }
  return address;
}

function normalize(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

// --- the windows' SQL --------------------------------------------------------------------------

const windows = schema.rateLimitWindows;

/** Milliseconds from the database's now to a window's end. */
const resetsInMs = sql<number>`greatest(0, extract(epoch from ${windows.resetsAt} - now()) * 1000)::float8`;

/**
 * One more request in `key`'s window under `rule`: a new window (count 1) when none runs or the
 * last has ended, else the count plus one. One statement; concurrent hits serialise on the row.
 */
async function countInWindow(db: Database, rule: string, key: string, windowMs: number): Promise<RateWindow> {
  const end = sql`now() + ${`${windowMs} milliseconds`}::interval`;
  const ended = sql`${windows.resetsAt} <= now()`;
  const [row] = await db
    .insert(windows)
    .values({ rule, key, count: 1, resetsAt: end })
    .onConflictDoUpdate({
      target: [windows.rule, windows.key],
      set: {
        count: sql`case when ${ended} then 1 else ${windows.count} + 1 end`,
        resetsAt: sql`case when ${ended} then ${end} else ${windows.resetsAt} end`,
      },
    })
    .returning({ count: windows.count, resetsInMs });
  return row ?? { count: 1, resetsInMs: windowMs };
}

async function readRateWindow(db: Database, rule: string, key: string): Promise<RateWindow | undefined> {
  const [row] = await db
    .select({ count: windows.count, resetsInMs })
    .from(windows)
    .where(and(eq(windows.rule, rule), eq(windows.key, key), sql`${windows.resetsAt} > now()`));
  return row;
}

async function deleteRateWindow(db: Database, rule: string, key: string): Promise<void> {
  await db.delete(windows).where(and(eq(windows.rule, rule), eq(windows.key, key)));
}

async function deleteEndedRateWindows(db: Database): Promise<void> {
  await db.delete(windows).where(lt(windows.resetsAt, sql`now()`));
}
