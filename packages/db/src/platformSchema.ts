import { index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Rate-limit windows (fixed windows per rule and key), shared by every API instance: N instances
 * on one database allow what one does. A row whose window has ended is reused by the next hit and
 * swept now and then.
 */
export const rateLimitWindows = pgTable(
  'rate_limit_windows',
  {
    /** The rule (`sends`, `signIns`, ...). */
    rule: text('rule').notNull(),
    /** Whom it counts: `user:<id>`, `ip:<address>`, `email:<email>|ip:<address>`, ... */
    key: text('key').notNull(),
    count: integer('count').notNull(),
    /** When this window ends (the database's clock, so instances agree). */
    resetsAt: timestamp('resets_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.rule, t.key] }), index('rate_limit_windows_resets_idx').on(t.resetsAt)],
);

export type RateLimitWindowRow = typeof rateLimitWindows.$inferSelect;
