import type { Database } from '@chat/db';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { textArray } from '../src/platform/sqlArrays';
import { useOwnedDatabase } from './support/testApi';

let db: Database;
useOwnedDatabase(crypto.randomUUID(), (ready) => {
  db = ready;
});

describe('a list of strings as one text[] parameter', () => {
  it('reaches PostgreSQL unchanged: ids as they are, quotes, backslashes, commas and braces escaped', async () => {
    const values = [
      crypto.randomUUID(),
      'say "hi"',
      'C:\\path\\to',
      'a,b',
      '{braces}',
      '',
      'NULL',
      '\\"both"\\',
    ];
    const [row] = await db.execute<{ values: string[] }>(sql`select ${textArray(values)} as values`);
    expect(row?.values).toEqual(values);
  });
});
