import { refusalMessages } from '@chat/contracts';
import type { Database } from '@chat/db';
import { isDatabaseUnavailable } from './databaseErrors';
import { ApiError } from './errors';

type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/** The refusal of a change whose commit may have landed: it must not be undone as rolled back. */
export class CommitUnsure extends ApiError {
  constructor() {
    super('unavailable', refusalMessages.unavailable.unsure, undefined, { 'retry-after': '2' });
  }
}

/**
 * Runs `work` in one transaction, for a change whose answer must not claim that nothing changed
 * when that is not known. A database that goes away while the transaction commits leaves its
 * outcome unknown here: the commit may have landed and only its acknowledgment been lost. That
 * refusal says so (`503 unavailable`, "reload to see whether it was"); a database that went away
 * before the work was done is the usual `503`, and nothing changed.
 */
export async function commitOrSayUnsure<T>(db: Database, work: (tx: Transaction) => Promise<T>): Promise<T> {
  let committing = false;
  try {
    return await db.transaction(async (tx) => {
      const result = await work(tx);
      committing = true;
      return result;
    });
  } catch (error) {
    if (!committing || !isDatabaseUnavailable(error)) throw error;
    throw new CommitUnsure();
  }
}
