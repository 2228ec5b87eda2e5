import type { MessageVersion } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow } from '@chat/db';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { ChatAgent } from '../../agent/chatAgent';
import { ApiError, InvariantError, notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import { lockOwnedThread, updateThread } from '../threads/repository';
import { recallBranch } from '../transcript';
import type { SendResult, TurnService } from '../turns/turnService';
import { versionsOfActiveBranch } from './lineage';
import {
  findThreadBranch,
  insertBranch,
  insertMessageOrigins,
  listLiveBranches,
  listMessageOrigins,
  markBranchActive,
  markBranchRemoved,
  mostRecentOtherBranch,
} from './repository';

export interface BranchServiceDeps {
  db: Database;
  chatAgent: ChatAgent;
  signals: Signals;
  turns: TurnService;
}

/** The active branch's transcript, with the ids the person sees and version info. */
export interface ActiveTranscript {
  branch: BranchRow;
  messages: MastraDBMessage[];
  /** Stored id -> the id the person sees (its origin). */
  originOf(messageId: string): string;
  versions: Map<string, MessageVersion>;
}

/**
 * Versions of a conversation (B1-B5). Each branch is its own Mastra memory thread: a new version
 * is a clone of the parent's messages before the edited one, plus the edit and a fresh reply, so
 * nothing is ever mutated and siblings never share model context. The API owns the lineage.
 */
export class BranchService {
  constructor(private readonly deps: BranchServiceDeps) {}

  async activeTranscript(thread: ThreadRow): Promise<ActiveTranscript> {
    const { memory } = this.deps.chatAgent;
    const [branches, origins] = await Promise.all([
      listLiveBranches(this.deps.db, thread.id),
      listMessageOrigins(this.deps.db, thread.id),
    ]);
    const active = branches.find((branch) => branch.id === thread.activeBranchId);
    if (!active) throw new InvariantError(`thread ${thread.id} has no active branch`);
    const transcripts = await Promise.all(
      branches.map((branch) => recallBranch(memory, branch.memoryThreadId)),
    );
    const originOf = (messageId: string) => origins.get(messageId) ?? messageId;
    const versions = versionsOfActiveBranch(
      branches.map((branch, i) => ({
        branchId: branch.id,
        lastActiveAt: branch.lastActiveAt,
        messages: (transcripts[i] ?? []).map((message) => ({
          originId: originOf(message.id),
          role: message.role,
          createdAt: message.createdAt,
        })),
      })),
      active.id,
    );
    const messages = transcripts[branches.indexOf(active)] ?? [];
    return { branch: active, messages, originOf, versions };
  }

  /** B1: edits a user message of the active branch into a new version and answers it (SSE). */
  async editMessage(
    ownerId: string,
    threadId: string,
    messageId: string,
    input: { clientRequestId: string; text: string },
  ): Promise<SendResult> {
    const { memory } = this.deps.chatAgent;
    const newBranchId = crypto.randomUUID();
    let cloned = false;
    try {
      return await this.deps.turns.runOnNewBranch(ownerId, threadId, input, async (tx, thread) => {
        const { branch, stored, index, originOf } = await this.userMessageOfActiveBranch(
          tx,
          thread,
          messageId,
        );
        await insertBranch(tx, {
          id: newBranchId,
          threadId,
          parentBranchId: branch.id,
          forkMessageId: messageId,
        });
        const before = stored.slice(0, index);
        if (before.length > 0) {
          // Exact ids, not a date: several messages can share one millisecond.
          const { messageIdMap } = await memory.cloneThread({
            sourceThreadId: branch.memoryThreadId,
            newThreadId: newBranchId,
            resourceId: ownerId,
            options: { messageFilter: { messageIds: before.map((message) => message.id) } },
          });
          cloned = true;
          await insertMessageOrigins(
            tx,
            newBranchId,
            Object.entries(messageIdMap ?? {}).map(([sourceId, copyId]) => ({
              messageId: copyId,
              originId: originOf(sourceId),
            })),
          );
        }
        await markBranchActive(tx, newBranchId);
        return newBranchId;
      });
    } catch (error) {
      // The transaction rolled back: drop the memory thread it cloned, if any.
      if (cloned) await memory.deleteThread(newBranchId).catch(() => {});
      throw error;
    }
  }

  /** B2, B5: selects a branch; the choice is stored on the thread, so a reload shows it. */
  async switchBranch(ownerId: string, threadId: string, branchId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const thread = await lockOwnedThread(tx, threadId, ownerId);
      if (!thread) throw notFound();
      const branch = await findThreadBranch(tx, threadId, branchId);
      if (!branch) throw notFound('Branch');
      if (thread.activeBranchId === branchId) return;
      await this.deps.turns.assertIdle(tx, threadId);
      await updateThread(tx, threadId, { activeBranchId: branchId });
      await markBranchActive(tx, branchId);
    });
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
  }

  /**
   * B4: deletes the latest user message of the active branch and its reply, from that branch only.
   * What the person then sees:
   * - the message had other versions: the neighbouring version (the one before it, else after),
   *   since this branch no longer has a version of that message to show;
   * - the deleted message was the edit that made this version (nothing of its own is left): the
   *   version is removed (its transcript goes, its row stays for turn history).
   */
  async deleteLatestTurn(ownerId: string, threadId: string, messageId: string): Promise<void> {
    const { memory } = this.deps.chatAgent;
    let removedBranch: BranchRow | undefined;
    await this.deps.db.transaction(async (tx) => {
      const thread = await lockOwnedThread(tx, threadId, ownerId);
      if (!thread) throw notFound();
      await this.deps.turns.assertIdle(tx, threadId);
      const transcript = await this.activeTranscript(thread);
      const { branch, messages: stored, originOf } = transcript;
      const index = userMessageIndex(stored, originOf, messageId);
      if (stored.slice(index + 1).some((message) => message.role === 'user')) {
        throw new ApiError('not_latest_turn', 'Only the latest message can be deleted.');
      }
      const version = transcript.versions.get(messageId);
      let target = version
        ? (version.branchIds[version.index - 2] ?? version.branchIds[version.index])
        : undefined;
      // Messages of its own (not copies of its parent's) that stay: none means the edit goes.
      const ownMessagesLeft = stored
        .slice(0, index)
        .filter((message) => originOf(message.id) === message.id).length;
      if (branch.forkMessageId !== null && ownMessagesLeft === 0) {
        target ??=
          (branch.parentBranchId
            ? (await findThreadBranch(tx, threadId, branch.parentBranchId))?.id
            : undefined) ?? (await mostRecentOtherBranch(tx, threadId, branch.id))?.id;
      }
      if (target && target !== branch.id && ownMessagesLeft === 0 && branch.forkMessageId !== null) {
        await markBranchRemoved(tx, branch.id);
        removedBranch = branch;
      } else {
        await memory.deleteMessages(stored.slice(index).map((message) => message.id));
      }
      if (target && target !== branch.id) {
        await updateThread(tx, threadId, { activeBranchId: target });
        await markBranchActive(tx, target);
      }
    });
    if (removedBranch) await memory.deleteThread(removedBranch.memoryThreadId);
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
  }

  private async userMessageOfActiveBranch(tx: Queryable, thread: ThreadRow, messageId: string) {
    if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
    const branch = await findThreadBranch(tx, thread.id, thread.activeBranchId);
    if (!branch) throw new InvariantError(`thread ${thread.id} lost its active branch`);
    const origins = await listMessageOrigins(tx, thread.id);
    const originOf = (id: string) => origins.get(id) ?? id;
    const stored = await recallBranch(this.deps.chatAgent.memory, branch.memoryThreadId);
    return { branch, stored, index: userMessageIndex(stored, originOf, messageId), originOf };
  }
}

/** Where the user message the person knows as `messageId` (an origin id) stands; 404 when absent. */
function userMessageIndex(
  stored: MastraDBMessage[],
  originOf: (id: string) => string,
  messageId: string,
): number {
  const index = stored.findIndex((message) => originOf(message.id) === messageId);
  if (index < 0 || stored[index]?.role !== 'user') throw notFound('Message');
  return index;
}
