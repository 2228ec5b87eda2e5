import type { CompactAnswer } from '@chat/contracts';
import type { Database } from '@chat/db';
import { threadBusy } from '../platform/errors';
import type { Logger } from '../platform/logger';
import type { Signals } from '../platform/notifications';
import { findThreadBranch } from './branches/repository';
import { requireOwnedThread } from './threads/repository';
import { compact } from './turns/context/compaction';
import { type ContextWindows, toContextMarker } from './turns/context/window';
import type { RuntimeDriver } from './turns/driver/types';
import { findActiveTurn } from './turns/repository';

export interface ContextServiceDeps {
  db: Database;
  driver: RuntimeDriver;
  windows: ContextWindows;
  signals: Signals;
  logger: Logger;
}

/**
 * "Compact now" (C3, `POST /api/threads/:id/compact`): the shown branch's older messages are
 * summarized at once, as a turn does past the threshold, while nothing runs. A reply running (or
 * waiting for an approval) holds the thread: `409 thread_busy`; it would compact in its own turn.
 */
export class ContextService {
  constructor(private readonly deps: ContextServiceDeps) {}

  async compactNow(ownerId: string, threadId: string): Promise<CompactAnswer> {
    const { db } = this.deps;
    const thread = await requireOwnedThread(db, threadId, ownerId);
    // The window of the chat's model (M2).
    const windows = this.deps.windows.forModel(thread.model);
    if (await findActiveTurn(db, threadId)) throw threadBusy('reply_running');
    const branch = thread.activeBranchId
      ? await findThreadBranch(db, threadId, thread.activeBranchId)
      : undefined;
    if (!branch) return { marker: null, context: this.emptyState(windows) };
    const measured = await windows.measure(db, branch);
    const marker = await compact({ ...this.deps, windows }, branch, measured, {
      force: true,
      signal: new AbortController().signal,
      onProgress: () => {},
    });
    if (marker) {
      await this.deps.signals
        .publish({ kind: 'context.changed', threadId })
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, threadId }, 'could not announce a compaction'),
        );
    }
    return {
      marker: marker && marker.id !== measured.marker?.id ? toContextMarker(marker) : null,
      context: await windows.state(db, branch),
    };
  }

  private emptyState(windows: ContextWindows) {
    const { window, compactAt } = windows.settings;
    return { window, used: 0, compactAt, marker: null };
  }
}
