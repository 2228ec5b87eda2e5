import type { Sql } from '@chat/db';

export interface RowHit {
  table: string;
  rows: number;
}

/**
 * Every row, in every table of the app's schema and Mastra's, whose text holds one of `needles`
 * (a user id, an email, thread and branch ids). The tables come from the database catalog, so a
 * table added later is searched too. A row is searched as a whole (`row::text`), so any column,
 * JSON included, counts.
 */
export async function rowsMentioning(sql: Sql, needles: string[]): Promise<RowHit[]> {
  const tables = await sql<{ schema: string; name: string }[]>`
    SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
    WHERE table_schema IN ('public', 'mastra') AND table_type = 'BASE TABLE'
    ORDER BY 1, 2`;
  if (tables.length === 0) throw new Error('no tables found: wrong database?');
  const patterns = needles.map((needle) => `%${needle.replace(/[\\%_]/g, '\\$&')}%`);
  const hits: RowHit[] = [];
  for (const { schema, name } of tables) {
    const [row] = await sql<{ count: string }[]>`
      SELECT count(*) AS count FROM ${sql(schema)}.${sql(name)} AS t
      WHERE t::text ILIKE ANY (${patterns}::text[])`;
    const rows = Number(row?.count ?? 0);
    if (rows > 0) hits.push({ table: `${schema}.${name}`, rows });
  }
  return hits;
}
