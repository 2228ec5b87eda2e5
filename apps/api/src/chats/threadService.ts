import { basename } from 'node:path';
import {
  type ChatMessageMetadata,
  type ContextMarker,
  type ContextState,
  type DrainMode,
  importProblems,
  refusalMessages,
  type Thread,
  type ThreadDetail,
  type ThreadListQuery,
  type ThreadPage,
  type ThreadSearchAnswer,
  type ToolMode,
  type UpdateThreadBody,
  type WorkspaceList,
} from '@chat/contracts';
import type { Database, ThreadRow } from '@chat/db';
import { agentTools } from '../agent/agentTools';
import type { ModelRegistry } from '../agent/models';
import type { ToolCatalog } from '../agent/toolCatalog';
import type { AgentWorkspaces } from '../agent/workspaces';
import { ApiError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import type { Signals } from '../platform/notifications';
import { repairBranchLineage } from './branches/lineageRepository';
import { listBranches } from './branches/repository';
import { readShownTranscript, readShownTurnRows, toShownChatMessages } from './detail/shownTranscript';
import { TranscriptCache } from './detail/transcriptCache';
import { feedbackOfThread } from './feedback/repository';
import { readAccountSettings, saveAccountSettings, setThreadChoices } from './threads/choices';
import { decodeThreadCursor, encodeThreadCursor } from './threads/cursor';
import { listNotes } from './threads/notes';
import {
  claimWorkspace,
  deleteThreadRow,
  insertThreadWithRootBranch,
  listThreadPage,
  requireOwnedThread,
  searchThreadsByOwner,
  setDrainMode,
  setToolModes,
  updateThread,
  workspacesTakenByOthers,
} from './threads/repository';
import { snippetAround } from './threads/search';
import type { TranscriptStore } from './transcript/transcriptStore';
import type { ApprovalService } from './turns/approval/approvalService';
import { listRequests } from './turns/approval/repository';
import type { ContextWindows } from './turns/context/window';
import type { InterruptService } from './turns/interrupt/interruptService';
import { marksOfTurns } from './turns/marks';
import { readTurnQueue } from './turns/queue/turnQueue';
import { hasActiveTurn } from './turns/repository';

/** One consistent moment of the database, for reads that answer several questions at once. */
const SNAPSHOT = { isolationLevel: 'repeatable read', accessMode: 'read only' } as const;

export interface ThreadServiceDeps {
  db: Database;
  /** The tools the chat has, with each one's default mode (T1). */
  tools: ToolCatalog;
  transcript: TranscriptStore;
  signals: Signals;
  interrupts: InterruptService;
  logger: Logger;
  /** Who runs a new chat's queue (`QUEUE_DRAIN`, Q15). */
  newChatDrainMode: DrainMode;
  /** The model's window of a branch (C2): the detail's meter and marker. */
  windows: ContextWindows;
  /** The configured models (M1): a chat's choice must be one of them. */
  models: ModelRegistry;
  /** Pending approvals follow a change of the chat's tool settings (T2). */
  approvals?: Pick<ApprovalService, 'followToolSettings'>;
  /** A1: the workspaces agent chats may work in, and whether guests may start them. Absent: off. */
  agents?: { workspaces: AgentWorkspaces; allowGuests: boolean };
  /** The detail's cache of converted transcripts (ADR-051); one of its own when absent. */
  transcriptCache?: TranscriptCache;
}

/**
 * A thread as its owner reads it. The chat's instructions (up to a page of text) come with the
 * detail and a change's answer only (`withInstructions`), not with every entry of the list.
 */
export function toThread(row: ThreadRow, options: { withInstructions?: boolean } = {}): Thread {
  return {
    id: row.id,
    title: row.title,
    activeBranchId: row.activeBranchId ?? '',
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    drainMode: row.drainMode,
    ...(row.model ? { model: row.model } : {}),
    ...(options.withInstructions && row.instructions ? { instructions: row.instructions } : {}),
    ...(row.forkedFromThreadId && row.forkedFromMessageId
      ? { forkedFrom: { threadId: row.forkedFromThreadId, messageId: row.forkedFromMessageId } }
      : {}),
    runtime: row.workspaceId ? 'agent' : 'chat',
    // The directory's own name, never its path.
    ...(row.workspaceId && row.workspacePath
      ? { workspace: { id: row.workspaceId, label: basename(row.workspacePath) || row.workspaceId } }
      : {}),
  };
}

/** The marker as the message it sits before carries it (the detail's contract shape, C3). */
function toMessageMarker({ messageId: _, ...marker }: NonNullable<ContextState['marker']>): ContextMarker {
  return marker;
}

/** Threads of one owner: every lookup is by (id, owner), so a foreign thread is simply not found (O3). */
export class ThreadService {
  private readonly transcriptCache: TranscriptCache;

  constructor(private readonly deps: ThreadServiceDeps) {
    this.transcriptCache = deps.transcriptCache ?? new TranscriptCache();
  }

  async create(
    ownerId: string,
    input: { title?: string; workspaceId?: string; directory?: string },
    account: { isGuest: boolean } = { isGuest: false },
  ): Promise<Thread> {
    const agent = await this.agentWorkspace(ownerId, input, account);
    // M2: a new chat starts with the model its owner picked last, while it is still offered.
    const { lastModel } = await readAccountSettings(this.deps.db, ownerId);
    const { thread } = await insertThreadWithRootBranch(this.deps.db, {
      ownerId,
      title: input.title ?? 'New chat',
      titled: input.title !== undefined,
      drainMode: this.deps.newChatDrainMode,
      ...(lastModel && this.deps.models.has(lastModel) ? { model: lastModel } : {}),
      ...(agent ? { workspaceId: agent.workspace.id, workspacePath: agent.path } : {}),
    });
    return toThread(thread);
  }

  /**
   * The workspaces this account may start agent chats on (A1): none when off, or for a guest unless
   * allowed; never one another account has taken.
   */
  async workspaces(ownerId: string, account: { isGuest: boolean }): Promise<WorkspaceList> {
    const { agents } = this.deps;
    if (!agents?.workspaces.enabled || (account.isGuest && !agents.allowGuests)) return { workspaces: [] };
    const offered = agents.workspaces.list();
    const taken = await workspacesTakenByOthers(
      this.deps.db,
      offered.map((workspace) => workspace.id),
      ownerId,
    );
    return { workspaces: offered.filter((workspace) => !taken.has(workspace.id)) };
  }

  /**
   * A1: where a new agent chat's agent works, or undefined for a plain chat. `403 forbidden` when
   * agent chats are off or the account is a guest the deployment does not let in; the workspace's
   * own refusals otherwise (AgentWorkspaces.resolve), and `422 workspace_refused` (`taken`) when
   * another account has it. The account's first agent chat on a workspace takes it.
   */
  private async agentWorkspace(
    ownerId: string,
    input: { workspaceId?: string; directory?: string },
    account: { isGuest: boolean },
  ) {
    if (input.workspaceId === undefined) {
      if (input.directory !== undefined)
        throw new ApiError('bad_request', 'A directory goes with a workspaceId.');
      return undefined;
    }
    const { agents } = this.deps;
    if (!agents?.workspaces.enabled) throw new ApiError('forbidden', 'Agent chats are off on this server.');
    if (account.isGuest && !agents.allowGuests) {
      throw new ApiError('forbidden', 'Sign up or sign in to start an agent chat.');
    }
    const resolved = await agents.workspaces.resolve(input.workspaceId, input.directory);
    if ((await claimWorkspace(this.deps.db, resolved.workspace.id, ownerId)) !== ownerId) {
      throw new ApiError('workspace_refused', 'That workspace belongs to another account on this server.', {
        reason: 'taken',
      });
    }
    return resolved;
  }

  /** One page of the owner's threads, newest activity first (`nextCursor` null on the last page). */
  async list(ownerId: string, query: ThreadListQuery): Promise<ThreadPage> {
    const after = query.cursor === undefined ? undefined : decodeThreadCursor(query.cursor);
    const rows = await listThreadPage(this.deps.db, ownerId, query.limit + 1, after);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      threads: page.map(({ row }) => toThread(row)),
      nextCursor: rows.length > query.limit && last ? encodeThreadCursor(last.position) : null,
    };
  }

  /** The owner's chats whose title or messages hold `query`, most recently active first. */
  async search(ownerId: string, query: string, limit: number): Promise<ThreadSearchAnswer> {
    const rows = await searchThreadsByOwner(this.deps.db, ownerId, query, limit);
    return {
      results: rows.map(({ thread, matchedText }) => ({
        thread: toThread(thread),
        snippet: matchedText ? snippetAround(matchedText, query) : null,
      })),
    };
  }

  /**
   * The thread as one moment of it: the transcript and the queue are read in one snapshot, so a
   * turn that settles meanwhile (its messages into memory, then its final state) shows either in
   * the queue or in the transcript, never in neither; read one after the other, a transcript read
   * before the messages landed and a queue read after the settle lost it from both. The branch's
   * messages before its latest turn come from this process's transcript cache when the snapshot
   * still holds their rows as cached (ADR-051, detail/shownTranscript.ts).
   */
  async detail(ownerId: string, threadId: string): Promise<ThreadDetail> {
    const { db } = this.deps;
    let repair: Promise<void> = Promise.resolve();
    const read = await db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId);
      const transcript = await readShownTranscript(tx, thread, this.transcriptCache);
      // Outside the snapshot, beside it on a connection of its own: the meter counts (and stores)
      // the tokens of messages not yet counted, a write the read-only snapshot refuses; it is a
      // measure, not part of the moment. Started here, it no longer waits for the snapshot's reads.
      const measured = this.deps.windows.forModel(thread.model).state(db, transcript.branch);
      // Awaited below; a snapshot that fails first must not leave it unhandled.
      measured.catch(() => {});
      // The shown transcript is the truth of its own lineage rows: any missing one is written.
      // Best effort, beside the snapshot: the answer does not depend on it, and a later detail
      // repairs again.
      repair = repairBranchLineage(db, threadId, transcript.branch.id, transcript.userMessages).catch(
        (error: unknown) =>
          this.deps.logger.warn({ err: error, threadId }, 'could not repair the lineage rows of a branch'),
      );
      const [marks, feedback, hitl, turnQueue, notes] = await Promise.all([
        readShownTurnRows(tx, threadId, transcript, this.transcriptCache).then((rows) =>
          marksOfTurns(tx, rows),
        ),
        // Looked up by shown id below: a rating of a message not shown is never read out.
        feedbackOfThread(tx, ownerId, threadId),
        listRequests(tx, threadId),
        readTurnQueue(tx, threadId),
        listNotes(tx, threadId),
      ]);
      return { thread, transcript, marks, feedback, hitl, turnQueue, notes, measured };
    }, SNAPSHOT);
    await repair;
    const { thread, transcript, marks, feedback, hitl, turnQueue, notes } = read;
    const context = await read.measured;
    const { versions } = transcript;
    const approvalIds = new Map(hitl.map((request) => [request.toolCallId, request.id]));
    const messages = toShownChatMessages(transcript, {
      metadataOf: (id) => {
        // Built in place, not spread from small objects: this runs for every shown message.
        const metadata: ChatMessageMetadata = { ...marks.get(id) };
        const version = versions.get(id);
        if (version) metadata.version = version;
        const rating = feedback.get(id);
        if (rating) metadata.feedback = rating;
        const { marker } = context;
        if (marker?.messageId === id) metadata.compaction = toMessageMarker(marker);
        return metadata;
      },
      approvalIdOf: (toolCallId) => approvalIds.get(toolCallId),
    });
    return {
      thread: toThread(thread, { withInstructions: true }),
      messages,
      turnQueue,
      hitl,
      notes,
      context,
      tools: this.catalogOf(thread).settings(thread.toolModes),
      toolServers: this.deps.tools.servers(),
    };
  }

  /**
   * Renames the thread, sets who runs its queue (Q15), changes its tool settings (T1), in one
   * transaction. Every tab reads the change on `thread.changed`; with the drain turned on, the
   * server's drain hears the same signal and takes the head if it may run. A running reply reads
   * the tool settings again at its next step (T2).
   */
  async update(ownerId: string, threadId: string, changes: UpdateThreadBody): Promise<Thread> {
    const { model, instructions } = changes;
    // M2: only a configured model; refused before anything changes.
    if (model !== undefined && !this.deps.models.has(model))
      throw new ApiError('bad_request', refusalMessages.bad_request.unknownModel(model));
    const row = await this.deps.db.transaction(async (tx) => {
      let thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      // Refused whole, before anything changes: the chat's tools are its runtime's (A5).
      if (changes.tools) this.assertKnownTools(changes.tools, this.catalogOf(thread));
      if (changes.title !== undefined)
        thread = await updateThread(tx, threadId, { title: changes.title, titled: true });
      if (changes.drainMode !== undefined && changes.drainMode !== thread.drainMode)
        thread = await setDrainMode(tx, threadId, changes.drainMode);
      if (model !== undefined || instructions !== undefined) {
        // Read when the chat's next turn is claimed (its model) or starts (its instructions): a
        // running reply keeps what it started with.
        thread = await setThreadChoices(tx, threadId, {
          ...(model !== undefined ? { model } : {}),
          ...(instructions !== undefined ? { instructions: instructions.trim() } : {}),
        });
        // M2: the person's latest pick is what their next new chat starts with.
        if (model !== undefined) await saveAccountSettings(tx, ownerId, { lastModel: model });
      }
      if (changes.tools) thread = await setToolModes(tx, threadId, { ...thread.toolModes, ...changes.tools });
      return thread;
    });
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    if (changes.tools) await this.deps.approvals?.followToolSettings(ownerId, threadId, changes.tools);
    return toThread(row, { withInstructions: true });
  }

  /** A chat's tools: an agent chat's are the agent's own (A5), every other chat's the chat agent's. */
  private catalogOf(thread: { workspaceId: string | null }): ToolCatalog {
    return thread.workspaceId ? agentTools : this.deps.tools;
  }

  /** Settings that name a tool the server does not have are refused whole (nothing changes). */
  private assertKnownTools(changes: Record<string, ToolMode>, catalog: ToolCatalog): void {
    const unknown = Object.keys(changes).find((name) => !catalog.has(name));
    if (unknown !== undefined) {
      throw new ApiError(
        'bad_request',
        refusalMessages.bad_request.invalidBody(`tools.${unknown}: `, importProblems.unknownTool),
      );
    }
  }

  /** Stops a running turn first, then removes the thread, its turns and every branch's memory. */
  async remove(ownerId: string, threadId: string): Promise<void> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    // A viewer may claim a queued turn between the interrupt and the delete: interrupt again then.
    for (let attempt = 0; ; attempt += 1) {
      await this.deps.interrupts.interrupt(ownerId, threadId);
      const branches = await this.deps.db.transaction(async (tx) => {
        await requireOwnedThread(tx, threadId, ownerId, { lock: true });
        if (attempt < 5 && (await hasActiveTurn(tx, threadId))) return null;
        const branches = await listBranches(tx, threadId);
        await deleteThreadRow(tx, threadId);
        return branches;
      });
      if (!branches) continue;
      for (const branch of branches) {
        // A removed version's memory thread is already gone.
        await this.deps.transcript.deleteConversation(branch.memoryThreadId).catch(() => {});
      }
      break;
    }
    await this.deps.signals.publish({ kind: 'thread.deleted', threadId });
  }
}
