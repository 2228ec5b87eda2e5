import type { Database } from '@chat/db';
import type { Logger } from '../../platform/logger';
import { deleteUnsentBefore } from './repository';

/**
 * Removes uploads no message ever carried once they are `maxAgeMs` old (a person attached an image
 * and never sent it). Runs every `intervalMs`; a failure is logged and the next round tries again:
 * it never throws into the process.
 */
export function startAttachmentSweeper(
  deps: { db: Database; logger: Logger },
  options: { intervalMs: number; maxAgeMs: number },
): () => void {
  const sweep = async () => {
    try {
      const removed = await sweepUnsentAttachments(deps.db, new Date(Date.now() - options.maxAgeMs));
      if (removed > 0) deps.logger.info({ removed }, 'removed unsent attachments');
    } catch (error) {
      deps.logger.warn({ err: error }, 'unsent attachment sweep failed');
    }
  };
  const timer = setInterval(() => void sweep(), options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** One round of the sweep: deletes uploads never sent that were made before `before`. */
export async function sweepUnsentAttachments(db: Database, before: Date): Promise<number> {
  return await deleteUnsentBefore(db, before);
}
