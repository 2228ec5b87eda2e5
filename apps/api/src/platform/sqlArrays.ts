import { type SQL, sql } from 'drizzle-orm';

/**
 * A list of strings as ONE `text[]` parameter (`column = any(${textArray(ids)})`). Drizzle's
 * `inArray` makes one parameter per value, and building a query with thousands of them costs
 * more than running it (a thread detail names every shown message).
 */
export function textArray(values: readonly string[]): SQL {
  return sql`${textArrayLiteral(values)}::text[]`;
}

/** `textArray`'s parameter: the value of a placeholder cast `::text[]` in a prepared statement. */
export function textArrayLiteral(values: readonly string[]): string {
  // Ids, the usual values (a thread detail sends thousands), need no escaping: tested, not replaced.
  return `{${values.map((value) => `"${NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"') : value}"`).join(',')}}`;
}

const NEEDS_ESCAPE = /["\\]/;
