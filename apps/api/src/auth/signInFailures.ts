import type { RateLimiter } from '../platform/rateLimit';

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
  assertMayTry(email: string, address: string): void {
    const pair = pairKey(email, address);
    const pairLimit = this.limits.limit('failedSignIns');
    const pairFailures = this.limits.count('failedSignIns', pair);
    if (pairLimit > 0 && pairFailures >= pairLimit) throw this.limits.refusal('failedSignIns', pair);
    const ceiling = this.limits.limit('failedSignInsPerEmail');
    const key = emailKey(email);
    if (ceiling > 0 && pairFailures > 0 && this.limits.count('failedSignInsPerEmail', key) >= ceiling) {
      throw this.limits.refusal('failedSignInsPerEmail', key);
    }
  }

  recordFailure(email: string, address: string): void {
    if (this.limits.limit('failedSignIns') > 0) this.limits.add('failedSignIns', pairKey(email, address));
    if (this.limits.limit('failedSignInsPerEmail') > 0)
      this.limits.add('failedSignInsPerEmail', emailKey(email));
  }

  /** A sign-in that worked clears its address's failures on that email (not the email's count). */
  recordSuccess(email: string, address: string): void {
    this.limits.reset('failedSignIns', pairKey(email, address));
  }

  /** `429 rate_limited` once an account's password changes failed `failedSignIns` times. */
  assertMayChangePassword(userId: string): void {
    const key = `password:${userId}`;
    const limit = this.limits.limit('failedSignIns');
    if (limit > 0 && this.limits.count('failedSignIns', key) >= limit) {
      throw this.limits.refusal('failedSignIns', key);
    }
  }

  recordPasswordChangeFailure(userId: string): void {
    if (this.limits.limit('failedSignIns') > 0) this.limits.add('failedSignIns', `password:${userId}`);
  }
}

const emailKey = (email: string) => `email:${email.toLowerCase()}`;
const pairKey = (email: string, address: string) => `${emailKey(email)}|ip:${address}`;
