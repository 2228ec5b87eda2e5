import type { H3Event } from 'h3';
import { ApiError } from './errors';

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
  now?: () => number;
}

/** Windows past this many keys are swept of expired ones before a new key is added. */
const SWEEP_AT = 10_000;

/**
 * Fixed-window request counters, in this process's memory. Per instance on purpose: they cost
 * nothing on the request path, keep working while the database is down, and the limits are abuse
 * guards far above what a person does, so N instances allowing up to N times the limit is
 * acceptable (see the README). The one limit that must hold across instances, turns running at once
 * per account, is decided in PostgreSQL when a turn is claimed (`turns/runner.ts`).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly now: () => number;

  constructor(private readonly options: RateLimitOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Counts one request of `key` under `rule`; past the limit, `429 rate_limited` with Retry-After. */
  hit(rule: RateLimitRule, key: string): void {
    if (this.limit(rule) <= 0) return;
    const window = this.add(rule, key);
    if (window.count > this.limit(rule)) throw this.refusal(rule, key);
  }

  /** The requests allowed per window under `rule`; 0 when the rule is off. */
  limit(rule: RateLimitRule): number {
    return this.options.limits[rule];
  }

  /** How many of `key` were counted under `rule` in its current window. */
  count(rule: RateLimitRule, key: string): number {
    const window = this.windows.get(`${rule}:${key}`);
    return window && window.resetAt > this.now() ? window.count : 0;
  }

  /** Counts one of `key` under `rule` without refusing anything (the caller decides). */
  add(rule: RateLimitRule, key: string): { count: number; resetAt: number } {
    const now = this.now();
    const id = `${rule}:${key}`;
    let window = this.windows.get(id);
    if (!window || window.resetAt <= now) {
      if (!window && this.windows.size >= SWEEP_AT) this.sweep(now);
      window = { count: 0, resetAt: now + this.options.windowMs };
      this.windows.set(id, window);
    }
    window.count += 1;
    return window;
  }

  /** Forgets what was counted of `key` under `rule`. */
  reset(rule: RateLimitRule, key: string): void {
    this.windows.delete(`${rule}:${key}`);
  }

  /** `429 rate_limited`, retrying when `key`'s window under `rule` ends. */
  refusal(rule: RateLimitRule, key: string): ApiError {
    const window = this.windows.get(`${rule}:${key}`);
    return rateLimited(Math.ceil(((window?.resetAt ?? this.now()) - this.now()) / 1000));
  }

  private sweep(now: number): void {
    for (const [id, window] of this.windows) if (window.resetAt <= now) this.windows.delete(id);
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
