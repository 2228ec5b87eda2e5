import type { ChatMessageMetadata, Thread, ThreadDetail } from '@chat/contracts';
import { type Database, schema, type ThreadRow } from '@chat/db';
import { and, eq, inArray } from 'drizzle-orm';
import type { ChatAgent } from '../../agent/chatAgent';
import { notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import type { BranchService } from '../branches/branchService';
import { toChatMessages } from '../transcript';
import { findActiveTurn } from '../turns/repository';
import type { TurnService } from '../turns/turnService';
import {
  deleteThreadRow,
  findOwnedThread,
  insertThreadWithRootBranch,
  listBranches,
  listThreadsByOwner,
  lockOwnedThread,
  updateThread,
} from './repository';

export interface ThreadServiceDeps {
  db: Database;
  chatAgent: ChatAgent;
  signals: Signals;
  turns: TurnService;
  branches: BranchService;
}

export function toThread(row: ThreadRow): Thread {
  return {
    id: row.id,
    title: row.title,
    activeBranchId: row.activeBranchId ?? '',
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Threads of one owner: every lookup is by (id, owner), so a foreign thread is simply not found (O3). */
export class ThreadService {
  constructor(private readonly deps: ThreadServiceDeps) {}

  async create(ownerId: string, input: { title?: string }): Promise<Thread> {
    const { thread } = await insertThreadWithRootBranch(this.deps.db, {
      ownerId,
      title: input.title ?? 'New chat',
      titled: input.title !== undefined,
    });
    return toThread(thread);
  }

  async list(ownerId: string): Promise<Thread[]> {
    return (await listThreadsByOwner(this.deps.db, ownerId)).map(toThread);
  }

  async detail(ownerId: string, threadId: string): Promise<ThreadDetail> {
    const thread = await this.requireOwned(ownerId, threadId);
    const { messages: stored, originOf, versions } = await this.deps.branches.activeTranscript(thread);
    const replies = await this.replyOutcomes(
      threadId,
      stored.map((message) => originOf(message.id)),
    );
    const messages = toChatMessages(stored, {
      idOf: originOf,
      metadataOf: (id) => {
        const version = versions.get(id);
        return { ...replies.get(id), ...(version ? { version } : {}) };
      },
    });
    return {
      thread: toThread(thread),
      messages,
      turnQueue: await this.deps.turns.turnQueue(this.deps.db, threadId),
      hitl: [],
    };
  }

  async rename(ownerId: string, threadId: string, title: string): Promise<Thread> {
    await this.requireOwned(ownerId, threadId);
    const thread = toThread(await updateThread(this.deps.db, threadId, { title, titled: true }));
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    return thread;
  }

  /** Stops a running turn first, then removes the thread, its turns and every branch's memory. */
  async remove(ownerId: string, threadId: string): Promise<void> {
    await this.requireOwned(ownerId, threadId);
    // A viewer may claim a queued turn between the interrupt and the delete: interrupt again then.
    for (let attempt = 0; ; attempt += 1) {
      await this.deps.turns.interrupt(ownerId, threadId);
      const branches = await this.deps.db.transaction(async (tx) => {
        if (!(await lockOwnedThread(tx, threadId, ownerId))) throw notFound();
        if (attempt < 5 && (await findActiveTurn(tx, threadId))) return null;
        const branches = await listBranches(tx, threadId);
        await deleteThreadRow(tx, threadId);
        return branches;
      });
      if (!branches) continue;
      for (const branch of branches) await this.deps.chatAgent.memory.deleteThread(branch.memoryThreadId);
      break;
    }
    await this.deps.signals.publish({ kind: 'thread.deleted', threadId });
  }

  async requireOwned(ownerId: string, threadId: string): Promise<ThreadRow> {
    const thread = await findOwnedThread(this.deps.db, threadId, ownerId);
    if (!thread) throw notFound();
    return thread;
  }

  /**
   * Interrupted and failed replies, keyed by assistant message id (the API owns interrupt state, O2).
   * A reply's origin id is the id it was streamed under, so copies in other versions share the mark.
   */
  private async replyOutcomes(
    threadId: string,
    messageIds: string[],
  ): Promise<Map<string, ChatMessageMetadata>> {
    const outcomes = new Map<string, ChatMessageMetadata>();
    if (messageIds.length === 0) return outcomes;
    const turns = schema.chatTurnRequests;
    const rows = await this.deps.db
      .select({
        assistantMessageId: turns.assistantMessageId,
        status: turns.status,
        error: turns.error,
        id: turns.id,
      })
      .from(turns)
      .where(
        and(
          eq(turns.threadId, threadId),
          inArray(turns.status, ['interrupted', 'failed']),
          inArray(turns.assistantMessageId, messageIds),
        ),
      );
    for (const row of rows) {
      if (!row.assistantMessageId) continue;
      outcomes.set(
        row.assistantMessageId,
        row.status === 'interrupted'
          ? { interrupted: true, turnId: row.id }
          : { error: row.error ?? 'The reply failed.', turnId: row.id },
      );
    }
    return outcomes;
  }
}
