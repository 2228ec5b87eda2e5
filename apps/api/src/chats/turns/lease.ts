import { type SQL, sql } from 'drizzle-orm';

/** The database's clock plus the lease, so instances with skewed clocks agree on expiry. */
export function leaseFromNow(leaseMs: number): SQL {
  return sql`now() + ${leaseInterval(leaseMs)}::interval`;
}

/** `leaseFromNow` in a prepared write: its value `lease` is `leaseInterval(leaseMs)`. */
export const leaseFromNowPlaceholder = sql`now() + ${sql.placeholder('lease')}::interval`;

/** A lease's length as PostgreSQL reads an interval. */
export function leaseInterval(leaseMs: number): string {
  return `${leaseMs} milliseconds`;
}
