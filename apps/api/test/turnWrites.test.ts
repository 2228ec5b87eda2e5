import { type Database, schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { insertThreadWithRootBranch, updateThread } from '../src/chats/threads/repository';
import { endTurn, insertTurn } from '../src/chats/turns/lifecycle';
import { findTurn } from '../src/chats/turns/repository';
import { appendCheckpointText, checkpointRunningTurn } from '../src/chats/turns/running/repository';
import { InvariantError } from '../src/platform/errors';
import { useOwnedDatabase } from './support/testApi';

/**
 * The writes of a short turn run as prepared statements (built once, values by placeholder): the
 * rows they leave are the ones the writes built per call left, values typed as the columns are
 * (timestamps, jsonb objects, not their text), and a column a settle leaves out is kept.
 */
const ownerId = crypto.randomUUID();
const runnerId = 'runner-a';
let db: Database;
useOwnedDatabase(ownerId, (ready) => {
  db = ready;
});

/** How PostgreSQL holds a jsonb column of the turn: an object or array, never a JSON string. */
async function jsonTypes(turnId: string): Promise<Record<string, string | null>> {
  const [row] = await db.execute<Record<string, string | null>>(sql`
    select jsonb_typeof(attachments) as attachments, jsonb_typeof(partial_parts) as parts, jsonb_typeof(usage) as usage
    from chat_turn_requests where id = ${turnId}`);
  return { ...row };
}

async function newThread() {
  return await insertThreadWithRootBranch(db, {
    ownerId,
    title: 'New chat',
    titled: false,
    drainMode: 'viewer',
  });
}

async function runningTurn() {
  const { thread, branch } = await newThread();
  const startedAt = new Date('2026-01-02T03:04:05.678Z');
  const turn = await insertTurn(
    db,
    'running',
    { threadId: thread.id, branchId: branch.id, clientRequestId: crypto.randomUUID(), text: 'hello' },
    { handoff: true, runnerId, leaseMs: 60_000, startedAt, userMessageId: 'user-1', model: 'm' },
  );
  return { thread, branch, turn, startedAt };
}

describe('the prepared writes of a turn', () => {
  it('record a turn claimed at once with its claim, and a waiting one with the defaults', async () => {
    const { thread, branch, turn, startedAt } = await runningTurn();
    expect(turn).toMatchObject({
      status: 'running',
      handoff: true,
      runnerId,
      startedAt,
      userMessageId: 'user-1',
      model: 'm',
      steer: false,
      attachments: [],
      requestedModel: null,
      finishedAt: null,
      assistantMessageId: null,
      partialText: '',
      error: null,
    });
    // The lease runs from the database's clock.
    expect(turn.leaseExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 30_000);
    const attachments = [{ id: 'a1', name: 'cat.png', mediaType: 'image/png', size: 3 }];
    const waiting = await insertTurn(db, 'queued', {
      threadId: thread.id,
      branchId: branch.id,
      clientRequestId: crypto.randomUUID(),
      text: 'then this',
      steer: true,
      attachments: attachments as never,
      requestedModel: 'other',
    });
    expect(waiting).toMatchObject({ status: 'queued', steer: true, attachments, requestedModel: 'other' });
    expect(waiting.queuePosition).toBeGreaterThan(turn.queuePosition);
    expect(waiting.startedAt).toBeNull();
    expect(await jsonTypes(waiting.id)).toMatchObject({ attachments: 'array' });
  });

  it('checkpoint the text and the messages as the row holds them (jsonb, not its text)', async () => {
    const { turn } = await runningTurn();
    const parts = {
      messages: [
        { id: 'r1', role: 'assistant' as const, createdAt: 'x', parts: [{ type: 'text', text: 'Hi' }] },
      ],
    };
    expect(
      await checkpointRunningTurn(db, turn.id, runnerId, 60_000, {
        assistantMessageId: 'r1',
        partialText: 'Hi',
        partialParts: parts,
      }),
    ).toBe(true);
    expect(
      await appendCheckpointText(db, turn.id, runnerId, 60_000, { delta: ' there', knownBytes: 2 }),
    ).toBe(true);
    // A stale length appends nothing.
    expect(await appendCheckpointText(db, turn.id, runnerId, 60_000, { delta: '!', knownBytes: 2 })).toBe(
      false,
    );
    expect(
      await checkpointRunningTurn(db, turn.id, 'another', 60_000, {
        assistantMessageId: 'r1',
        partialText: '',
      }),
    ).toBe(false);
    const row = await findTurn(db, turn.threadId, turn.id);
    expect(row).toMatchObject({ assistantMessageId: 'r1', partialText: 'Hi there', partialParts: parts });
    expect(await jsonTypes(turn.id)).toMatchObject({ parts: 'object' });
  });

  it('end a turn clearing its checkpoint, keeping a resume token and usage it was not given', async () => {
    const { turn } = await runningTurn();
    const usage = { inputTokens: 3, outputTokens: 4 };
    await db
      .update(schema.chatTurnRequests)
      .set({ resumeToken: 'run-1', usage, partialText: 'Hi', partialParts: { messages: [] } })
      .where(eq(schema.chatTurnRequests.id, turn.id));
    const finishedAt = new Date('2026-01-02T03:04:06.789Z');
    const kept = await endTurn(db, turn, 'completed', { error: null, assistantMessageId: 'r1', finishedAt });
    expect(kept).toMatchObject({
      status: 'completed',
      resumeToken: 'run-1',
      usage,
      assistantMessageId: 'r1',
      partialText: '',
      partialParts: null,
      outcome: null,
      leaseExpiresAt: null,
      finishedAt,
    });
    // The status it was seen in is gone: the write fails loudly.
    await expect(
      endTurn(db, turn, 'completed', { error: null, assistantMessageId: 'r1', finishedAt }),
    ).rejects.toThrow(InvariantError);

    const { turn: other } = await runningTurn();
    await db
      .update(schema.chatTurnRequests)
      .set({ resumeToken: 'run-2', usage })
      .where(eq(schema.chatTurnRequests.id, other.id));
    const cleared = await endTurn(db, other, 'failed', {
      error: 'boom',
      assistantMessageId: null,
      resumeToken: null,
      usage: null,
      finishedAt,
    });
    expect(cleared).toMatchObject({ status: 'failed', error: 'boom', resumeToken: null, usage: null });
    const { turn: third } = await runningTurn();
    const given = await endTurn(db, third, 'interrupted', {
      error: null,
      assistantMessageId: null,
      resumeToken: 'run-3',
      usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 1 },
      finishedAt,
    });
    expect(await jsonTypes(third.id)).toMatchObject({ usage: 'object' });
    expect(given).toMatchObject({
      resumeToken: 'run-3',
      usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 1 },
    });
  });

  it("touch a thread in a send's two shapes, and in any other as built", async () => {
    const { thread, branch } = await newThread();
    const touched = await updateThread(db, thread.id, {});
    expect(touched.updatedAt.getTime()).toBeGreaterThanOrEqual(thread.updatedAt.getTime());
    expect(touched).toMatchObject({ title: 'New chat', titled: false });
    const titled = await updateThread(db, thread.id, { title: 'Hello', titled: true });
    expect(titled).toMatchObject({ title: 'Hello', titled: true, activeBranchId: branch.id });
    expect(titled.updatedAt.getTime()).toBeGreaterThanOrEqual(touched.updatedAt.getTime());
    const renamed = await updateThread(db, thread.id, { title: 'Renamed' });
    expect(renamed).toMatchObject({ title: 'Renamed', titled: true });
    await expect(updateThread(db, crypto.randomUUID(), {})).rejects.toThrow(InvariantError);
  });
});
