import type { Queryable, ThreadRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';
import { type ChatToolModes, toolModesOf } from './repository';

const { threads, accountSettings } = schema;

/**
 * A chat's and its owner's choices about the model (M2) and the instructions (M4): the SQL of the
 * chat's columns and of the owner's settings row.
 */

/** Sets the chat's model and/or instructions (not activity: the chat keeps its place in the list). */
export async function setThreadChoices(
  q: Queryable,
  threadId: string,
  changes: { model?: string; instructions?: string },
): Promise<ThreadRow> {
  const [row] = await q
    .update(threads)
    .set({ ...changes, updatedAt: sql`${threads.updatedAt}` })
    .where(eq(threads.id, threadId))
    .returning();
  if (!row) throw new InvariantError(`thread ${threadId} vanished`);
  return row;
}

// Read as every turn is claimed (its model) and as it starts (its instructions): built once
// (preparedQuery).
const selectThreadModel = preparedQuery('thread_model', (q) =>
  q
    .select({ model: threads.model })
    .from(threads)
    .where(eq(threads.id, sql.placeholder('threadId'))),
);
const selectRunInstructions = preparedQuery('run_instructions', (q) =>
  q
    .select({
      chat: threads.instructions,
      account: accountSettings.instructions,
      workspaceId: threads.workspaceId,
      workspacePath: threads.workspacePath,
      toolModes: threads.toolModes,
    })
    .from(threads)
    .leftJoin(accountSettings, eq(accountSettings.ownerId, threads.ownerId))
    .where(eq(threads.id, sql.placeholder('threadId'))),
);

/** The chat's model as chosen (null: the default), read when a turn is claimed. */
export async function readThreadModel(q: Queryable, threadId: string): Promise<string | null> {
  const [row] = await selectThreadModel(q, { threadId });
  return row?.model ?? null;
}

/** The custom instructions a run of the chat gets (M4): the owner's, then the chat's; '' when none. */
export async function readRunInstructions(
  q: Queryable,
  threadId: string,
): Promise<{ account: string; chat: string }> {
  const { account, chat } = await readRunSetup(q, threadId);
  return { account, chat };
}

/**
 * What a started run of the chat reads of it: the custom instructions (M4), an agent chat's
 * workspace (A1; null on a plain chat), and the tool settings its first step goes by (T2, as
 * `readToolModes` reads them before each later step). One read.
 */
export async function readRunSetup(q: Queryable, threadId: string): Promise<RunSetup> {
  const [row] = await selectRunInstructions(q, { threadId });
  return runSetupOf(row ? { ...row, instructions: row.chat } : undefined, row?.account ?? '');
}

/** What a started run of the chat reads of it (`readRunSetup`). */
export interface RunSetup {
  account: string;
  chat: string;
  workspace: { id: string; path: string } | null;
  toolModes: ChatToolModes;
}

/**
 * `readRunSetup` from a thread row in hand and its owner's instructions (`readAccountInstructions`):
 * a send that claims its turn read both under the thread lock, with its writes (ADR-060).
 */
export function runSetupOf(
  thread: Pick<ThreadRow, 'instructions' | 'workspaceId' | 'workspacePath' | 'toolModes'> | undefined,
  account: string,
): RunSetup {
  const workspace =
    thread?.workspaceId && thread.workspacePath
      ? { id: thread.workspaceId, path: thread.workspacePath }
      : null;
  return { account, chat: thread?.instructions ?? '', workspace, toolModes: toolModesOf(thread) };
}

/** The owner's custom instructions (M4); '' when none. */
export async function readAccountInstructions(q: Queryable, ownerId: string): Promise<string> {
  const [row] = await selectAccountInstructions(q, { ownerId });
  return row?.instructions ?? '';
}

// Read by every send that claims its turn: built once (preparedQuery).
const selectAccountInstructions = preparedQuery('account_instructions', (q) =>
  q
    .select({ instructions: accountSettings.instructions })
    .from(accountSettings)
    .where(eq(accountSettings.ownerId, sql.placeholder('ownerId'))),
);

export async function readAccountSettings(
  q: Queryable,
  ownerId: string,
): Promise<{ instructions: string; lastModel: string | null }> {
  const [row] = await q
    .select({ instructions: accountSettings.instructions, lastModel: accountSettings.lastModel })
    .from(accountSettings)
    .where(eq(accountSettings.ownerId, ownerId));
  return { instructions: row?.instructions ?? '', lastModel: row?.lastModel ?? null };
}

/** Writes the owner's settings (a row is made on the first change). */
export async function saveAccountSettings(
  q: Queryable,
  ownerId: string,
  changes: { instructions?: string; lastModel?: string },
): Promise<void> {
  await q
    .insert(accountSettings)
    .values({ ownerId, ...changes })
    .onConflictDoUpdate({ target: accountSettings.ownerId, set: changes });
}
