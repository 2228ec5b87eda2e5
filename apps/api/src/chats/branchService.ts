import { refusalMessages } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow } from '@chat/db';
import type { ModelRegistry } from '../agent/models';
import { ApiError, InvariantError, notFound } from '../platform/errors';
import type { Signals } from '../platform/notifications';
import { attachmentsForMessage } from './attachments/repository';
import { activeTranscript } from './branches/activeTranscript';
import { deleteLineage } from './branches/lineageRepository';
import { releaseImagesOfRemovedTurns } from './branches/removedImages';
import {
  findThreadBranch,
  insertBranch,
  insertMessageOrigins,
  listBranchOrigins,
  markBranchActive,
  markBranchRemoved,
  mostRecentOtherBranch,
} from './branches/repository';
import { textOf } from './branches/transcript';
import { requireOwnedThread, updateThread } from './threads/repository';
import { transcriptTables } from './transcript/tables';
import type { StoredMessage, TranscriptStore } from './transcript/transcriptStore';
import type { SendResult, TurnAcceptance } from './turns/accepting/turnAcceptance';
import { validMessageText } from './turns/messageText';
import { assertNoActiveTurn, assertQuiet } from './turns/queue/busy';
import { forgetTurnsOfDeletedMessages } from './turns/queue/failedAttempt';
import { listTurnsOfMessages } from './turns/repository';

export interface BranchServiceDeps {
  db: Database;
  transcript: TranscriptStore;
  signals: Signals;
  acceptance: TurnAcceptance;
  /** The configured models (M1): a regenerate's model must be one of them. */
  models: ModelRegistry;
}

/**
 * Versions of a conversation (B1-B5). Each branch is its own conversation of the transcript store: a new version
 * is a clone of the parent's messages before the edited one, plus the edit and a fresh reply, so
 * nothing is ever mutated and siblings never share model context. The API owns the lineage.
 */
export class BranchService {
  constructor(private readonly deps: BranchServiceDeps) {}

  /**
   * B1: edits a user message of the active branch into a new version and answers it (SSE). Under
   * the thread lock: refuses while anything runs or waits (thread_busy), makes the branch (its
   * Mastra clone is made outside the transaction, so it is dropped again if the transaction fails),
   * makes it active and claims the turn at once. A retried clientRequestId replays the first answer.
   */
  async editMessage(
    ownerId: string,
    threadId: string,
    messageId: string,
    input: { clientRequestId: string; text: string; attachmentIds?: string[] },
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    return await this.startVersion(ownerId, threadId, input.clientRequestId, async () => ({
      messageId,
      text,
      attachmentIds: input.attachmentIds,
    }));
  }

  /**
   * Regenerates the latest reply of the active branch: a new version of the user message it
   * answers, with the same text (B1's machinery), so `‹ k / n ›` shows on that user message and the
   * earlier reply stays one switch away. Refused like an edit while anything runs or waits
   * (thread_busy), and with not_latest_turn when `replyId` is not the latest reply shown.
   */
  async regenerateReply(
    ownerId: string,
    threadId: string,
    replyId: string,
    input: { clientRequestId: string; model?: string },
  ): Promise<SendResult> {
    // M3: another model writes this version only; the chat's own choice stays.
    const { model } = input;
    if (model !== undefined && !this.deps.models.has(model))
      throw new ApiError('bad_request', refusalMessages.bad_request.unknownModel(model));
    return await this.startVersion(ownerId, threadId, input.clientRequestId, async (tx, thread) => {
      const branch = thread.activeBranchId
        ? await findThreadBranch(tx, thread.id, thread.activeBranchId)
        : undefined;
      if (!branch) throw new InvariantError(`thread ${thread.id} has no active branch`);
      const origins = await listBranchOrigins(tx, branch.id);
      // The stored id of the reply in this branch: a copy's when it is one here.
      const storedId = [...origins].find(([, originId]) => originId === replyId)?.[0] ?? replyId;
      if ((origins.get(storedId) ?? storedId) !== replyId) throw notFound('message');
      // Only the tail from the reply on is read, and the one message it answers.
      const { tail } = await transcriptTables.readBranchTail(tx, branch, storedId);
      if (tail[0]?.id !== storedId || tail[0].role !== 'assistant') throw notFound('message');
      if (tail.slice(1).some((message) => message.role === 'user' || message.role === 'assistant'))
        throw new ApiError('not_latest_turn', refusalMessages.not_latest_turn.regenerate);
      const asked = await transcriptTables.readUserMessageBefore(tx, branch.memoryThreadId, storedId);
      if (!asked) throw notFound('message');
      return {
        messageId: origins.get(asked.id) ?? asked.id,
        text: validMessageText(textOf(asked)),
        ...(model !== undefined ? { requestedModel: model } : {}),
      };
    });
  }

  /**
   * A new version at the user message `pick` names (read under the thread lock, after the quiet
   * check), accepted like any turn (TurnAcceptance) and answered at once (SSE). A retried
   * clientRequestId replays the first answer.
   */
  private async startVersion(
    ownerId: string,
    threadId: string,
    clientRequestId: string,
    /** `attachmentIds`: the version's images; left out, it keeps the original message's. */
    pick: (
      tx: Queryable,
      thread: ThreadRow,
    ) => Promise<{ messageId: string; text: string; attachmentIds?: string[]; requestedModel?: string }>,
  ): Promise<SendResult> {
    const newBranchId = crypto.randomUUID();
    return await this.deps.acceptance.accept(
      { ownerId, threadId, clientRequestId },
      {
        decide: async (tx, thread) => {
          await assertQuiet(tx, threadId);
          const { messageId, text, attachmentIds, requestedModel } = await pick(tx, thread);
          // The new version keeps the original message's images unless the edit names others.
          const attachments = attachmentIds
            ? await attachmentsForMessage(tx, threadId, ownerId, attachmentIds)
            : (await listTurnsOfMessages(tx, threadId, [messageId])).find(
                (turn) => turn.userMessageId === messageId,
              )?.attachments;
          const branch = await this.createVersion(tx, thread, messageId, newBranchId);
          return {
            branchId: newBranchId,
            branch,
            text,
            attachments: attachments ?? [],
            joins: 'run',
            ...(requestedModel ? { requestedModel } : {}),
            thread: { activeBranchId: newBranchId },
            announce: true,
          };
        },
      },
    );
  }

  /**
   * B2, B5: selects a branch; the choice is stored on the thread, so a reload shows it. Allowed
   * whenever no turn runs: queued turns run on the version shown when they are claimed.
   */
  async switchBranch(ownerId: string, threadId: string, branchId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const branch = await findThreadBranch(tx, threadId, branchId);
      if (!branch) throw notFound('branch');
      if (thread.activeBranchId === branchId) return;
      await assertNoActiveTurn(tx, threadId);
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
   * Allowed whenever no turn runs. The deleted turns' rows lose their text; a failed attempt among
   * them is the failed head's, which is then deleted from the queue too (Q11).
   */
  async deleteLatestTurn(ownerId: string, threadId: string, messageId: string): Promise<void> {
    let removedBranch: BranchRow | undefined;
    let queueChanged = false;
    await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      await assertNoActiveTurn(tx, threadId);
      const transcript = await activeTranscript(tx, thread);
      const { branch, messages: stored, originOf } = transcript;
      const index = userMessageIndex(stored, originOf, messageId);
      if (stored.slice(index + 1).some((message) => message.role === 'user')) {
        throw new ApiError('not_latest_turn');
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
      let which: { branchId: string } | { messageIds: string[] };
      if (target && target !== branch.id && ownMessagesLeft === 0 && branch.forkMessageId !== null) {
        await markBranchRemoved(tx, branch.id);
        removedBranch = branch;
        which = { branchId: branch.id };
      } else {
        const deleted = stored.slice(index).map((message) => message.id);
        await transcriptTables.deleteMessages(tx, deleted);
        await deleteLineage(tx, branch.id, deleted.map(originOf));
        // What the branch holds next goes where the deleted message was, beside its copies elsewhere.
        await transcriptTables.markBranchTailFork(tx, branch.id);
        which = { messageIds: deleted };
      }
      const forgotten = await forgetTurnsOfDeletedMessages(tx, threadId, which);
      await releaseImagesOfRemovedTurns(tx, threadId, forgotten.removed);
      queueChanged = forgotten.queueChanged;
      if (target && target !== branch.id) {
        await updateThread(tx, threadId, { activeBranchId: target });
        await markBranchActive(tx, target);
      }
    });
    if (removedBranch) await this.deps.transcript.deleteConversation(removedBranch.memoryThreadId);
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    if (queueChanged) await this.deps.signals.publish({ kind: 'queue.changed', threadId });
  }

  /**
   * Makes branch `branchId` a new version of the active branch at its user message `messageId`:
   * a copy of the messages before it in a memory thread of its own (by exact ids: several can
   * share one millisecond), their origins, and the branch row (returned). All in `tx`: an edit
   * that rolls back leaves nothing of itself, in memory either.
   */
  private async createVersion(
    tx: Queryable,
    thread: ThreadRow,
    messageId: string,
    branchId: string,
  ): Promise<BranchRow> {
    if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
    const parent = await findThreadBranch(tx, thread.id, thread.activeBranchId);
    if (!parent) throw new InvariantError(`thread ${thread.id} lost its active branch`);
    const origins = await listBranchOrigins(tx, parent.id);
    const originOf = (id: string) => origins.get(id) ?? id;
    // The stored id of the message in the parent: a copy's when it is one there.
    const storedId = [...origins].find(([, originId]) => originId === messageId)?.[0] ?? messageId;
    if (originOf(storedId) !== messageId) throw notFound('message');
    if ((await transcriptTables.readMessageRole(tx, parent.memoryThreadId, storedId)) !== 'user')
      throw notFound('message');
    const before = await transcriptTables.readMessageIdsBefore(tx, parent.memoryThreadId, storedId);
    const branch = await insertBranch(tx, {
      id: branchId,
      threadId: thread.id,
      parentBranchId: parent.id,
      forkMessageId: messageId,
    });
    if (before.length > 0) {
      const copies = await transcriptTables.copyMessages(tx, {
        from: parent.memoryThreadId,
        to: branchId,
        resourceId: thread.ownerId,
        messageIds: before,
      });
      await insertMessageOrigins(
        tx,
        branchId,
        [...copies].map(([sourceId, copyId]) => ({ messageId: copyId, originId: originOf(sourceId) })),
      );
      await transcriptTables.writeBranchLineage(tx, branchId);
    }
    // Its copies end where the edited message was: the version's own message forks there.
    await transcriptTables.markBranchTailFork(tx, branchId);
    await markBranchActive(tx, branchId);
    return branch;
  }
}

/** Where the user message the person knows as `messageId` (an origin id) stands; 404 when absent. */
function userMessageIndex(
  stored: StoredMessage[],
  originOf: (id: string) => string,
  messageId: string,
): number {
  const index = stored.findIndex((message) => originOf(message.id) === messageId);
  if (index < 0 || stored[index]?.role !== 'user') throw notFound('message');
  return index;
}
