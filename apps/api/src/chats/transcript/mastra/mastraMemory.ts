import { DATABASE_TIMEOUTS, type HangWatch } from '@chat/db';
import { ConsoleLogger } from '@mastra/core/logger';
import { Memory } from '@mastra/memory';
import { PostgresStore } from '@mastra/pg';
import pg from 'pg';

/**
 * Mastra's Postgres memory: the canonical store of every branch's executed transcript (O1), which
 * the transcript store (mastraTranscript.ts) and the Mastra agent (driver/mastra/) both write
 * through. Mastra's tables live in their own schema so drizzle-kit never sees them.
 */
export interface MastraMemory {
  memory: Memory;
  /** Mastra's storage (the Mastra driver keeps suspended runs' snapshots in its workflow store). */
  storage: PostgresStore;
  close(): Promise<void>;
}

export async function openMastraMemory(options: {
  databaseUrl: string;
  /** The client-side deadline the pool's connections keep (the app's, `DatabaseHandle.watch`). */
  hangWatch?: HangWatch;
  /** Serialises schema creation with other instances starting at the same time. */
  startupLock: <T>(work: () => Promise<T>) => Promise<T>;
}): Promise<MastraMemory> {
  // Schema changes run once at start on a store of their own, with no statement timeout: a new
  // index on a large table may take minutes. Requests then go through a pool whose connections and
  // statements are bounded like the app's own (`DATABASE_TIMEOUTS`), so an outage fails fast here too.
  const setup = new PostgresStore({
    id: 'chat-memory-setup',
    connectionString: options.databaseUrl,
    schemaName: 'mastra',
  });
  try {
    await options.startupLock(() => setup.init());
  } finally {
    await setup.close();
  }
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 10,
    connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
    statement_timeout: DATABASE_TIMEOUTS.statementMs,
    // The client's own bound, for a server that stopped answering without closing the connection.
    query_timeout: DATABASE_TIMEOUTS.statementMs + DATABASE_TIMEOUTS.connectMs,
    keepAlive: true,
    // A database that hangs: the same client-side deadline as the app's own connections.
    ...(options.hangWatch ? { stream: options.hangWatch.stream } : {}),
  });
  // An idle client whose connection breaks emits 'error' on the pool; unhandled, it would end the
  // process. The next query makes a new connection.
  pool.on('error', () => {});
  // A client checked out of the pool (between two statements of a transaction, say) has no pool
  // listener: its connection cut by the hang watch or a network fault would emit an 'error' no one
  // hears, an uncaught exception. Its next statement fails with the cause; the pool then drops it.
  pool.on('connect', (client) => client.on('error', () => {}));
  const storage = new PostgresStore({ id: 'chat-memory', pool, schemaName: 'mastra', disableInit: true });
  const memory = new Memory({
    storage,
    // No semantic recall or working memory. How much of a branch a turn recalls is decided per
    // call (the messages after the branch's context marker, C3: chats/turns/context/); this
    // default only bounds a recall that names no window.
    options: { lastMessages: 40, semanticRecall: false, generateTitle: false },
  });
  // The store's domains (memory, workflows, ...) keep loggers of their own, which print each
  // failed query to stderr outside the API's log during an outage; the failures reach the runner
  // as errors, and it logs them.
  const quiet = new ConsoleLogger({ level: 'silent' });
  for (const domain of Object.values(storage.stores ?? {})) domain?.__setLogger(quiet);
  return {
    memory,
    storage,
    // The store does not end a pool it was given.
    close: async () => {
      await storage.close();
      await pool.end();
    },
  };
}
