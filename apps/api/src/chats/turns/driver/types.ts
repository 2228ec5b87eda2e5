import type { Attachment, HitlDecision, TokenUsage, ToolMode } from '@chat/contracts';
import type { UIMessageChunk } from 'ai';

/**
 * The runtime driver seam: the one interface the turn runner talks to for a model or agent call.
 * A driver owns how a turn is produced (the Mastra agent: `mastra/`; tests add a scripted one);
 * the runner owns the turn's row, its stream to subscribers and its settlement. Nothing here
 * knows a framework: replies are AI SDK UI message chunks, the wire format of the product.
 */

/** A message the person added while a reply runs (a steer), as a driver takes it in. */
export interface SteerMessage {
  /** The steer's own turn row. */
  turnId: string;
  /** The id its user message gets in the transcript. */
  messageId: string;
  text: string;
}

/** The tool call a run stopped on until a person decides (H3), with the driver's handle to resume. */
export interface SuspendedCall {
  /** Opaque to the host (the Mastra driver: its run id). */
  resumeToken: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** What a run of a turn does: start it, or continue a suspended run once a person decided. */
export type Segment =
  | { kind: 'start' }
  | {
      kind: 'resume';
      /** The call as the approval request keeps it (a driver that lost its run makes it again: A5). */
      call: Pick<SuspendedCall, 'resumeToken' | 'toolCallId' | 'toolName' | 'args'>;
      decision: HitlDecision;
    };

export type DriverEvent =
  /** A piece of the reply, in the AI SDK UI message stream shape. */
  | { type: 'chunk'; chunk: UIMessageChunk }
  /**
   * Steers were taken into the running reply at a step boundary (`takeSteers`): what came before
   * is one finished assistant message, the steers follow it, and the continuation streams as
   * `continuationMessageId`.
   */
  | { type: 'steer-boundary'; steers: SteerMessage[]; continuationMessageId: string }
  /** The run stopped on a tool call that needs a person's approval; it ends suspended. */
  | { type: 'suspended'; call: SuspendedCall }
  /** Opaque to the host: what a later connection resumes from (stored on the turn's final reply). */
  | { type: 'resume-token'; token: string }
  /**
   * The run ended. `saved`: the driver's own save of the run's messages went through, as far as
   * the driver can tell (the host checks memory before it calls the turn done either way).
   */
  | { type: 'turn-complete'; saved: boolean }
  /**
   * A6: the agent compacted its own conversation during the run (Claude Code's compaction): the
   * host marks the branch at the run's message as its own compaction would (the live notice is a
   * `data-compaction` chunk of the driver's).
   */
  | { type: 'compacted' }
  /** The run's token usage as the model reported it (C1), summed over its model calls; before `turn-complete`. */
  | { type: 'usage'; usage: TokenUsage }
  /**
   * The run failed. `error`: what failed it, as caught or reported (the host logs it and tells the
   * person in the product's words, F3); a driver that knows what happened in those words raises a
   * `WordedFailure` (platform/errors.ts).
   */
  | { type: 'error'; error: unknown }
  /**
   * The run could not start: the database it reads first could not be reached. Nothing was
   * produced and nothing stored, so the host may send the turn again; only ever the first event.
   * `cause`: the database error.
   */
  | { type: 'unavailable'; cause: unknown };

/**
 * Everything a driver needs to produce one run of a turn. A driver stores the run's messages in
 * the conversation as it can; the runner keeps its own record of the reply and writes whatever is
 * missing before the turn is done (a save that failed, a run that broke off).
 */
export interface DriverTurn {
  /** The host's turn this run produces (for the driver's own logs). */
  turnId: string;
  /** The conversation the run continues (a branch's memory thread), and whose it is. */
  conversation: { id: string; ownerId: string };
  /** The user message this run answers, under the id the transcript keeps. */
  message: { id: string; text: string; attachments: Attachment[] };
  /**
   * Hidden instructions for this run only: the interrupt handoff (S5), a steer that missed its
   * reply; and the person's own (M4: their account's, then the chat's, '' when none), which come
   * right after the built-in instructions.
   */
  instructions: { handoff: boolean; lateSteer: boolean; custom?: string };
  /**
   * The id of the configured model the run is written by (M2), fixed when the turn was claimed.
   * A driver fails the run (an `error` event) when the id is no longer configured; it never calls
   * another model instead.
   */
  model?: string;
  segment: Segment;
  /**
   * A3: the resume token kept on the conversation's newest final reply that kept one (failed turns
   * too), for a driver whose agent keeps its own session (Claude Code): a new connection resumes
   * from it, else starts fresh. Left out when none was kept.
   */
  resumeFrom?: string;
  /**
   * A7: for a version that kept no token of its own yet (`resumeFrom` absent), the token kept on
   * the reply right before the message the version replaces: the agent's session forks from that
   * point, and the session the token names is never changed. Left out when there is none.
   */
  forkFrom?: string;
  /**
   * A1: an agent chat's workspace and the directory its agent works in, as the chat keeps them
   * (the driver checks the directory again before it starts an agent there). Absent: a plain chat.
   */
  workspace?: { id: string; path: string };
  /**
   * What of the conversation the model gets besides the message (C3): the stored messages after
   * the branch's marker (the newest `messages` of them) and the summary of those before it, if any.
   * The host measured the window; a driver never reads more of the conversation than this.
   */
  history: { messages: number; summary: string | null };
  abortSignal: AbortSignal;
  /**
   * Asked by a driver that can steer, at each step boundary: the steers to take in now. The host
   * has recorded them as delivered when it answers, so an edit or delete in the Dock either came
   * first (and is what is taken in) or finds the steer delivered; none is taken in twice.
   */
  takeSteers(): Promise<SteerMessage[]>;
  /**
   * The chat's tool settings now (T1), every tool by name. A driver reads them before each model
   * call and each tool call, so a change reaches the running reply at its next step (T2): an `off`
   * tool is no longer offered, an `ask` tool asks. Left out: each tool's own default. An agent
   * chat's (A5) name only the tools its owner changed: the agent's own rules do the rest.
   */
  toolModes?(): Promise<Record<string, ToolMode>>;
}

/** One run of a turn on a driver. */
export interface RuntimeConnection {
  events: AsyncIterable<DriverEvent>;
  /** The run takes steers in at its step boundaries (`takeSteers`); when not, the host queues them. */
  steerable: boolean;
  close(): void;
}

/** A compaction's request (C3): the older part of a conversation, to be summarized. */
export interface SummaryRequest {
  /** The summary of what came before these messages (the branch's previous compaction), if any. */
  previousSummary: string | null;
  messages: Array<{ role: string; text: string }>;
  abortSignal: AbortSignal;
}

export interface RuntimeDriver {
  send(turn: DriverTurn): Promise<RuntimeConnection>;
  /**
   * The driver's agent keeps its own session between runs (A3): each started run is given the
   * conversation's newest kept resume token (`resumeFrom`). Left out: the host does not read it.
   */
  resumesSessions?: boolean;
  /**
   * The driver's run stores its own messages in memory (Mastra's agent saves them as it ends): the
   * settle then finds them stored and writes only what is missing. Left out: the runner writes
   * them all (its settle counts their tokens beforehand, ADR-057).
   */
  savesMessages?: boolean;
  /**
   * The model's summary of the messages (C3); throws when the model call fails. A driver without
   * it cannot compact: the host falls back to the newest messages that fit.
   */
  summarize?(request: SummaryRequest): Promise<string>;
  /** Forgets a suspended run that will never be resumed (its turn was stopped). Best effort. */
  discard(resumeToken: string): Promise<void>;
  /** Ends what the driver keeps running between runs (an agent's sessions), as the API stops. */
  close?(): Promise<void>;
}
