import { schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { transcriptTables } from '../src/chats/transcript/tables';
import { insertTokenCounts } from '../src/chats/turns/context/repository';
import type { ApiClient } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

/**
 * The model's window of a branch (C2) is tallied at every turn and every thread detail: a sum of
 * each message's stored token count. PostgreSQL plans that join from its statistics, which lag
 * behind a chat that grew since they were taken (a new long chat, or one longer than most); on
 * such statistics it once joined every message with every count of the chat (quadratic: 40 ms and
 * more of database time per detail at 2,000 messages). The count is now looked up by its key for
 * each message, whatever the statistics say, so the tally grows with the branch, not its square.
 */
let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const ENCODING = 'local_words';

/** A chat whose branch holds `size` messages, each with its token count stored. */
async function chatOf(size: number) {
  const db = api.runtime.database.db;
  const threadId = await client.createThread();
  const [branch] = await db.select().from(schema.branches).where(eq(schema.branches.threadId, threadId));
  if (!branch) throw new Error('no branch');
  const start = Date.now() - size * 1000;
  const messages = Array.from({ length: size }, (_, index) => ({
    id: crypto.randomUUID(),
    threadId: branch.memoryThreadId,
    resourceId: 'window-tally',
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: JSON.stringify({ format: 2, parts: [{ type: 'text', text: `Message ${index}.` }] }),
    createdAt: new Date(start + index * 1000),
  }));
  await transcriptTables.insertMessages(db, messages);
  await insertTokenCounts(
    db,
    messages.map((message) => ({ threadId, messageId: message.id, encoding: ENCODING, tokens: 3 })),
  );
  return { threadId, branch, size };
}

/** The fastest of a few tallies (the machine is shared: the least disturbed run says the work). */
async function fastestTally(chat: Awaited<ReturnType<typeof chatOf>>): Promise<number> {
  const db = api.runtime.database.db;
  const scope = { threadId: chat.threadId, branch: chat.branch, start: null, encoding: ENCODING };
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 5; run += 1) {
    const startedAt = performance.now();
    const tally = await transcriptTables.tallyModelWindow(db, scope);
    fastest = Math.min(fastest, performance.now() - startedAt);
    expect(tally).toEqual({ messages: chat.size, tokens: chat.size * 3, uncounted: [] });
  }
  return fastest;
}

describe('the model window tally of a long chat', () => {
  it('grows with the branch, not with its square, on statistics taken before the chat grew (C2)', async () => {
    const db = api.runtime.database.db;
    // Statistics of near-empty tables, kept so: what a server has right after a chat grew fast.
    for (const table of ['mastra.mastra_messages', 'message_token_counts', 'message_origins']) {
      await db.execute(sql.raw(`alter table ${table} set (autovacuum_enabled = false)`));
      await db.execute(sql.raw(`analyze ${table}`));
    }
    const short = await chatOf(250);
    const long = await chatOf(4_000);
    const shortMs = await fastestTally(short);
    const longMs = await fastestTally(long);
    // 16 times the messages: about 16 times the work when linear, 256 times when quadratic.
    expect(longMs / Math.max(shortMs, 1)).toBeLessThan(100);
  }, 120_000);
});
