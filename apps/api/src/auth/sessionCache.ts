import type { Signals } from '../platform/notifications';
import type { SignedIn } from './signedIn';

/**
 * How long a looked-up session is believed without asking the database again. Sessions that end
 * (sign-out, revoking other devices, a password change, a guest signing up, deleting the account)
 * are dropped at once on every instance by a `sessions.ended` signal; this bound only matters if
 * such a signal were lost.
 */
export const SESSION_CACHE_MS = 15_000;
/** Past this many entries the expired ones are swept, then the oldest dropped. */
const MAX_ENTRIES = 20_000;

interface Entry {
  signedIn: SignedIn;
  /** Until when this entry may answer (the session's own expiry caps it). */
  until: number;
}

/**
 * Who a session cookie belongs to, remembered for a few seconds. better-auth's session lookup is
 * two queries (the session, then its user) and a good deal of CPU on every request; a person
 * sending a message, reading the thread and following its events makes several requests a second.
 * Keyed by the signed cookie value exactly as the browser sent it: only a cookie better-auth has
 * verified is ever stored, and only the same cookie finds it.
 */
export class SessionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly stopListening: () => void;

  constructor(
    private readonly signals: Signals,
    options: { ttlMs?: number; now?: () => number } = {},
  ) {
    this.ttlMs = options.ttlMs ?? SESSION_CACHE_MS;
    this.now = options.now ?? Date.now;
    this.stopListening = signals.subscribe((signal) => {
      if (signal.kind === 'sessions.ended') this.forgetUser(signal.userId);
    });
  }

  /** The cached answer for `cookie` (null: none, or expired). */
  get(cookie: string): SignedIn | null {
    const entry = this.entries.get(cookie);
    if (!entry) return null;
    if (entry.until <= this.now()) {
      this.entries.delete(cookie);
      return null;
    }
    return entry.signedIn;
  }

  /** Remembers who `cookie` belongs to, for at most the TTL and never past `expiresAt`. */
  set(cookie: string, signedIn: SignedIn, expiresAt: Date): void {
    if (this.entries.size >= MAX_ENTRIES) this.sweep();
    const until = Math.min(this.now() + this.ttlMs, expiresAt.getTime());
    this.entries.set(cookie, { signedIn, until });
  }

  /**
   * Some of `userId`'s sessions ended (or their user is gone): every instance forgets all of that
   * user's entries (the next request asks better-auth again).
   */
  async ended(userId: string): Promise<void> {
    this.forgetUser(userId);
    await this.signals.publish({ kind: 'sessions.ended', userId });
  }

  stop(): void {
    this.stopListening();
    this.entries.clear();
  }

  private forgetUser(userId: string): void {
    for (const [cookie, entry] of this.entries)
      if (entry.signedIn.userId === userId) this.entries.delete(cookie);
  }

  private sweep(): void {
    const now = this.now();
    for (const [cookie, entry] of this.entries) if (entry.until <= now) this.entries.delete(cookie);
    // Still full: drop the oldest (a Map iterates in insertion order).
    for (const cookie of this.entries.keys()) {
      if (this.entries.size < MAX_ENTRIES) break;
      this.entries.delete(cookie);
    }
  }
}

/** The value of cookie `name` in a Cookie header, as sent (still URL-encoded and signed). */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
