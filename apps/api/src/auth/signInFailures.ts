import { type RateLimiter, type RateWindow, rateLimited } from '../platform/rateLimit';

/**
 * Failed password attempts, counted so that guessing is slow and the owner is never locked out:
 * - per (email, address): `failedSignIns` failures in a window, then that address may not try the
 *   email again until the window ends (the right password included);
 * - per email, from all addresses: past `failedSignInsPerEmail` failures in a window, an address
 *   that has failed on the email may not try again, and a new address gets one try. A flood from
 *   many addresses is thus held to one guess per address, while the owner, signing in from an
 *   address of their own, still gets in.
 * A password change (a signed-in person typing their current password) counts its failures per
 * account under the first rule. Every attempt also counts per address (`signIns`, auth handler).
 */
export class SignInFailures {
  constructor(private readonly limits: RateLimiter) {}

  /** `429 rate_limited` when this email may not be tried from this address now. */
  async assertMayTry(email: string, address: string): Promise<void> {
    const pairLimit = this.limits.limit('failedSignIns');
    const ceiling = this.limits.limit('failedSignInsPerEmail');
    if (pairLimit <= 0 && ceiling <= 0) return;
    const [pair, all] = await Promise.all([
      this.limits.window('failedSignIns', pairKey(email, address)),
      ceiling > 0 ? this.limits.window('failedSignInsPerEmail', emailKey(email)) : undefined,
    ]);
    if (pairLimit > 0 && pair.count >= pairLimit) throw refusalUntil(pair);
    if (all && pair.count > 0 && all.count >= ceiling) throw refusalUntil(all);
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await Promise.all([
      this.limits.limit('failedSignIns') > 0 && this.limits.add('failedSignIns', pairKey(email, address)),
      this.limits.limit('failedSignInsPerEmail') > 0 &&
        this.limits.add('failedSignInsPerEmail', emailKey(email)),
    ]);
  }

  /** A sign-in that worked clears its address's failures on that email (not the email's count). */
  async recordSuccess(email: string, address: string): Promise<void> {
    await this.limits.reset('failedSignIns', pairKey(email, address));
  }

  /** `429 rate_limited` once an account's password changes failed `failedSignIns` times. */
  async assertMayChangePassword(userId: string): Promise<void> {
    const limit = this.limits.limit('failedSignIns');
    if (limit <= 0) return;
    const window = await this.limits.window('failedSignIns', `password:${userId}`);
    if (window.count >= limit) throw refusalUntil(window);
  }

  async recordPasswordChangeFailure(userId: string): Promise<void> {
    if (this.limits.limit('failedSignIns') > 0) await this.limits.add('failedSignIns', `password:${userId}`);
  }
}

/** `429 rate_limited`, retrying when `window` ends. */
const refusalUntil = (window: RateWindow) => rateLimited(Math.ceil(window.resetsInMs / 1000));

const emailKey = (email: string) => `email:${email.toLowerCase()}`;
const pairKey = (email: string, address: string) => `${emailKey(email)}|ip:${address}`;
