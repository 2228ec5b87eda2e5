import { type SQL, sql } from 'drizzle-orm';

/**
 * A list of strings as ONE `text[]` parameter (`column = any(${textArray(ids)})`). Drizzle's
 * `inArray` makes one parameter per value, and building a query with thousands of them costs
 * more than running it (a thread detail names every shown message).
 */
export function textArray(values: readonly string[]): SQL {
  const literal = `{${values.map((value) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
  return sql`${literal}::text[]`;
}
