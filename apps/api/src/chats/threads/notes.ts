import type { Note } from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { asc, eq } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';

/** SQL of the notes the `save_note` tool stores on a thread. */

const { notes, branches } = schema;

/**
 * Stores a note on the thread that owns the Mastra memory thread a tool ran in (each branch has
 * its own memory thread). Returns null when that branch is gone (its thread was deleted).
 */
export async function insertNoteForMemoryThread(
  q: Queryable,
  memoryThreadId: string,
  text: string,
): Promise<{ threadId: string; note: Note } | null> {
  const [branch] = await q
    .select({ threadId: branches.threadId })
    .from(branches)
    .where(eq(branches.memoryThreadId, memoryThreadId));
  if (!branch) return null;
  const [row] = await q.insert(notes).values({ threadId: branch.threadId, text }).returning();
  if (!row) throw new InvariantError('insert returned no note');
  return {
    threadId: branch.threadId,
    note: { id: row.id, text: row.text, createdAt: row.createdAt.toISOString() },
  };
}

export async function listNotes(q: Queryable, threadId: string): Promise<Note[]> {
  const rows = await q
    .select()
    .from(notes)
    .where(eq(notes.threadId, threadId))
    .orderBy(asc(notes.createdAt), asc(notes.id));
  return rows.map((row) => ({ id: row.id, text: row.text, createdAt: row.createdAt.toISOString() }));
}
