import { z } from 'zod';
import { attachmentIds, type DocumentCut } from './attachments';
import type { ContextMarker, ContextState, TokenUsage } from './context';
import type { MessageFeedback } from './feedback';
import type { HitlRequest, Note } from './hitl';
import { THREAD_PAGE_DEFAULT, THREAD_PAGE_MAX } from './limits';
import { customInstructions, modelId } from './models';
import { hasVisibleText } from './text';
import { type ToolServer, type ToolSetting, toolModeChanges } from './tools';
import type { TurnQueue } from './turns';

export interface Thread {
  id: string;
  title: string;
  activeBranchId: string;
  createdAt: string;
  updatedAt: string;
  /**
   * Where this chat was started from with "New chat from here" (P3): the owner's chat and the
   * message it was copied up to. Absent on any other chat, and once that chat is deleted.
   */
  forkedFrom?: ForkOrigin;
  /**
   * Who runs the queue (Q10, Q15): `viewer`, an open page claims the head; `background`, the
   * server does, with no page open ("Keep going when I leave").
   */
  drainMode: DrainMode;
  /**
   * The chat's model (M2): the id its next turn runs with when claimed. Absent: the default model
   * (the first of `GET /api/models`).
   */
  model?: string;
  /**
   * The chat's own instructions (M4), in the detail and a `PATCH`'s answer (not in the list);
   * absent when none. Only its owner reads them, never a share.
   */
  instructions?: string;
  /**
   * A1: `agent`, an agent chat on a workspace (its turns run the Claude Code agent); else `chat`.
   * The API always sends it; optional for clients built before it.
   */
  runtime?: ThreadRuntime;
  /** An agent chat's workspace as the deployment names it (never an absolute path). */
  workspace?: AgentWorkspace;
}

export type ThreadRuntime = 'chat' | 'agent';

/** A workspace agent chats may work in (A1): its stable id and the name a person reads. */
export interface AgentWorkspace {
  id: string;
  label: string;
}

/** `GET /api/workspaces`: the workspaces this account may start agent chats on; `[]` when off. */
export interface WorkspaceList {
  workspaces: AgentWorkspace[];
}

/** Who claims a chat's queue head (Q15). New chats take `QUEUE_DRAIN` of the API's configuration. */
export const drainModes = ['viewer', 'background'] as const;
export type DrainMode = (typeof drainModes)[number];

/** The chat (and its message) a fork was copied from. */
export interface ForkOrigin {
  threadId: string;
  messageId: string;
}

/** A thread title: 1 to 200 characters after trimming, some of them visible. */
const threadTitle = z.string().trim().min(1).max(200).refine(hasVisibleText, 'must not be empty');

export const createThreadBody = z.object({
  title: threadTitle.optional(),
  /** A1: an agent chat on this workspace (`GET /api/workspaces`). */
  workspaceId: z.string().min(1).max(64).optional(),
  /**
   * A1: the directory the agent works in, absolute, inside the workspace (its root when left
   * out). A path outside it, a symlink out of it, or no such directory is refused.
   */
  directory: z.string().min(1).max(4096).optional(),
});
export type CreateThreadBody = z.infer<typeof createThreadBody>;

/**
 * `PATCH /api/threads/:id`: a new title, who runs the queue (Q15), the chat's tool settings (T1),
 * or several of them. A body that changes nothing is refused, like any other bad body.
 */
export const updateThreadBody = z
  .object({
    title: threadTitle.optional(),
    drainMode: z.enum(drainModes).optional(),
    /** M2: one of `GET /api/models`; an unknown id is refused and nothing changes. */
    model: modelId.optional(),
    /** M4: '' clears them. */
    instructions: customInstructions.optional(),
    /** T1: the named tools' modes; the others keep theirs. */
    tools: toolModeChanges.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'nothing to change');
export type UpdateThreadBody = z.infer<typeof updateThreadBody>;

/** `GET /api/threads?limit&cursor`: the query of one page of the thread list. */
export const threadListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(THREAD_PAGE_MAX).default(THREAD_PAGE_DEFAULT),
  cursor: z.string().min(1).max(200).optional(),
});
export type ThreadListQuery = z.infer<typeof threadListQuery>;

/** One page of the thread list, newest activity first; `nextCursor` is null on the last page. */
export interface ThreadPage {
  threads: Thread[];
  nextCursor: string | null;
}

/** Version info on a user message that has siblings (B2). `index` is 1-based. */
export interface MessageVersion {
  index: number;
  count: number;
  branchIds: string[];
}

export interface ChatMessageMetadata {
  /** Assistant reply cut short by an interrupt (S2). */
  interrupted?: boolean;
  /**
   * Part of a failed attempt that waits at the queue head (Q11): on its reply, or on its user
   * message when it failed before any reply text. `error` says why, in words a person can read.
   */
  failed?: boolean;
  error?: string;
  /** The model that wrote an assistant reply (`local`, `openai:gpt-4o-mini`, ...). */
  model?: string;
  version?: MessageVersion;
  createdAt?: string;
  turnId?: string;
  /** On a user message sent as a steer that joined a running reply (its turn was `delivered`). */
  steered?: boolean;
  /** The caller's feedback on an assistant message (H2). */
  feedback?: MessageFeedback;
  /** A reply's token usage as the model reported it (C1). */
  usage?: TokenUsage;
  /**
   * On the first message the model still sees whole (C3): the marker "Earlier messages summarized
   * for the model" (or, for a cut, "not seen by the model") shows before it.
   */
  compaction?: ContextMarker;
  /**
   * On a user message: the documents it carries (D1), what their chips show (pages or size), and
   * for one the model read only part of when the message ran, how much (`cut`).
   */
  documents?: MessageDocument[];
}

/** A document of a user message, as its chip in the transcript describes it. */
export interface MessageDocument {
  id: string;
  size: number;
  pages?: number;
  /** How many words its text holds (a Word document's chip shows them). */
  words?: number;
  cut?: DocumentCut;
}

/** An AI SDK UIMessage as the API returns it (parts kept loose; the web casts to UIMessage). */
export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  parts: Array<{ type: string; [key: string]: unknown }>;
  metadata: ChatMessageMetadata;
}

export interface ThreadDetail {
  thread: Thread;
  messages: ChatMessage[];
  turnQueue: TurnQueue;
  /**
   * The thread's tool approvals, oldest first: a `pending` one blocks the queue; decided and
   * cancelled ones stay with their final status, so the transcript's cards can show the outcome.
   */
  hitl: HitlRequest[];
  /** Notes saved by the `save_note` tool, oldest first. */
  notes: Note[];
  /** The context meter of the shown branch (C2). */
  context: ContextState;
  /** The chat's tool settings (T1): every tool the server has, with this chat's mode. Never in a share or export. */
  tools: ToolSetting[];
  /** T3: the configured MCP servers and whether their tools are offered now. */
  toolServers: ToolServer[];
}

/**
 * `POST /api/threads/:id/messages/:messageId/versions`: the edited text of a user message.
 * `attachmentIds`: the images the new version carries; left out, it keeps the original's.
 */
export const editMessageBody = z.object({
  clientRequestId: z.string().min(1).max(200),
  text: z.string(),
  attachmentIds: attachmentIds.optional(),
});
export type EditMessageBody = z.infer<typeof editMessageBody>;

/** `POST /api/threads/:id/messages/:messageId/regenerate`: a new version of the latest reply. */
export const regenerateReplyBody = z.object({
  clientRequestId: z.string().min(1).max(200),
  /** M3: the model this new version is written by (default: the chat's model, which stays as it was). */
  model: modelId.optional(),
});
export type RegenerateReplyBody = z.infer<typeof regenerateReplyBody>;

export const switchBranchBody = z.object({ branchId: z.uuid() });
export type SwitchBranchBody = z.infer<typeof switchBranchBody>;

/** `GET /api/search?q=`: the caller's chats whose title or message text holds `q`. */
export const searchThreadsQuery = z.object({
  q: z.string().trim().min(1).max(200),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});
export type SearchThreadsQuery = z.infer<typeof searchThreadsQuery>;

export interface ThreadSearchResult {
  thread: Thread;
  /** Words around the first match in a message, or null when only the title matched. */
  snippet: string | null;
}

export interface ThreadSearchAnswer {
  results: ThreadSearchResult[];
}
