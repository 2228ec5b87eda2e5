import type { ChatMessageMetadata, Thread, ThreadDetail } from '@chat/contracts';
import type { Database, ThreadRow } from '@chat/db';
import type { ChatAgent } from '../../agent/chatAgent';
import { notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import type { BranchService } from '../branches/branchService';
import { toChatMessages } from '../transcript';
import { findActiveTurn, listTurnsOfMessages } from '../turns/repository';
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
    const replies = await this.turnMetadata(
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
      for (const branch of branches) {
        // A removed version's memory thread is already gone.
        await this.deps.chatAgent.memory.deleteThread(branch.memoryThreadId).catch(() => {});
      }
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
   * What the API knows of each message (it owns interrupt state, O2): the turn it belongs to, and
   * whether a reply was interrupted or failed. Keyed by message id as streamed, which is also the
   * origin id of its copies in other versions, so they share the marks.
   */
  private async turnMetadata(
    threadId: string,
    messageIds: string[],
  ): Promise<Map<string, ChatMessageMetadata>> {
    const metadata = new Map<string, ChatMessageMetadata>();
    for (const turn of await listTurnsOfMessages(this.deps.db, threadId, messageIds)) {
      if (turn.userMessageId) metadata.set(turn.userMessageId, { turnId: turn.id });
      if (!turn.assistantMessageId) continue;
      metadata.set(turn.assistantMessageId, {
        turnId: turn.id,
        ...(turn.status === 'interrupted' ? { interrupted: true } : {}),
        ...(turn.status === 'failed' ? { error: turn.error ?? 'The reply failed.' } : {}),
      });
    }
    return metadata;
  }
}
