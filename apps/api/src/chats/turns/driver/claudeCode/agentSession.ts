import type {
  CanUseTool,
  HookCallback,
  Options,
  PermissionResult,
  Query,
  query,
  SDKUserMessage,
} from '@anthropic-ai/claude-agent-sdk';
import { type ToolMode, turnErrorMessages } from '@chat/contracts';
import { steerReminder } from '../../../../agent/steerReminder';
import { TOOL_OFF_REASON } from '../../../../agent/toolPolicy';
import { WordedFailure } from '../../../../platform/errors';
import type { DriverEvent, DriverTurn, SteerMessage, SuspendedCall } from '../types';
import { pointOf, tokenOf } from './sessionToken';
import { sameInput, TurnStreamAdapter } from './streamAdapter';

/**
 * One long-lived Claude Code session of one conversation (A2): a `query` fed through the SDK's
 * streaming input, so the next message of the chat goes to the same running agent. It runs one
 * turn at a time (the host runs one turn per thread); the turn's events go to its `TurnChannel`.
 * The session ends when the driver closes it (idle window over, parked, a stopped turn) or when the
 * binary ends; a turn running then ends with an error, never with a crash of the API.
 */

/** What a session is started with; the driver's configuration and the conversation's state. */
export interface SessionStart {
  /** The SDK's `query`, loaded once the first agent session starts (`claudeCodeDriver.ts`). */
  query: typeof query;
  cwd: string;
  env: Record<string, string | undefined>;
  model?: string;
  /** The session to resume (A3): the explicit token's, else the newest kept one's; none: fresh. */
  resume?: string;
  /**
   * A7: the session `resume` names is forked at this chain entry (`forkSession` with
   * `resumeSessionAt`): the new session has its history up to there, and `resume`'s is never
   * changed.
   */
  forkAt?: string;
  /** The binary's stderr, one line at a time (for the log; never a person's text). */
  stderr?: (line: string) => void;
  /** A5: the chat's tool settings as the agent starts (its `off` tools are not offered at all). */
  policy: AgentPolicy;
}

/**
 * A5: a chat's tool settings as the agent's permission rules, by tool name: `allow` runs without
 * asking, `deny` (the person's `off`) never runs, `ask` asks the person every call. A tool the
 * chat did not set is left to the agent's own rules.
 */
export interface AgentPolicy {
  allow: string[];
  deny: string[];
  ask: string[];
}

export function policyOf(modes: Record<string, ToolMode>): AgentPolicy {
  const named = (mode: ToolMode) =>
    Object.entries(modes)
      .filter(([, value]) => value === mode)
      .map(([name]) => name)
      .sort();
  return { allow: named('allow'), deny: named('off'), ask: named('ask') };
}

const signatureOf = (policy: AgentPolicy) => JSON.stringify(policy);

/** An unbounded async queue, read once: a turn's events, or the agent's streaming input. */
export class AsyncChannel<T> implements AsyncIterable<T> {
  private readonly buffered: T[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;

  push(item: T): void {
    if (this.ended) return;
    this.buffered.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  private wake() {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.buffered.length > 0) {
        yield this.buffered.shift() as T;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }
}

export type TurnChannel = AsyncChannel<DriverEvent>;

/** The turn a session is running now. */
interface ActiveTurn {
  turn: DriverTurn;
  channel: TurnChannel;
  adapter: TurnStreamAdapter;
  /** Whether `resume-token` went out yet (the first event of every run). */
  tokenSent: boolean;
  /** Steers the hook took in, shown at the next model call's start (the roll, S4). */
  boundary: { steers: SteerMessage[]; continuationMessageId: string } | undefined;
  /** Steers are taken in only while the turn streams (not once it ended or was stopped). */
  steering: boolean;
}

export class AgentSession {
  private readonly input = new AsyncChannel<SDKUserMessage>();
  private readonly controller = new AbortController();
  private readonly query: Query;
  private active: ActiveTurn | undefined;
  /**
   * A5: the tool call waiting for a person (the run that asked ended suspended). The agent waits
   * in `canUseTool` until the decision comes back as a resumed run, or the session ends.
   */
  private approval:
    | {
        token: string;
        toolCallId: string;
        adapter: TurnStreamAdapter;
        decide(result: PermissionResult): void;
      }
    | undefined;
  /** A5: the one call allowed without asking (approved before a restart), until it is made. */
  private approved: { toolName: string; input: unknown } | undefined;
  /** The session id the binary reported (the resume token); the one resumed until it reports. */
  sessionId: string | undefined;
  /** The newest entry of the session's own chain (an SDK message uuid): where a reply ended (A7). */
  private lastEntry: string | undefined;
  closed = false;
  /** When the session last ended a turn or took one (the pool parks the least recently used). */
  lastUsed = Date.now();
  private readonly onEnd: () => void;
  /** A5: the tools the session was started without (`disallowedTools` cannot change live). */
  readonly notOffered: string;
  /** A5: the policy the agent runs under now (its signature). */
  private applied: string;

  constructor(start: SessionStart, onEnd: () => void) {
    this.onEnd = onEnd;
    this.notOffered = JSON.stringify(start.policy.deny);
    this.applied = signatureOf(start.policy);
    // A fork is a session of its own: its id is the one the binary reports.
    this.sessionId = start.forkAt ? undefined : start.resume;
    const toolCallHook: HookCallback = async (input) => {
      const toolName = 'tool_name' in input ? input.tool_name : '';
      const decision = await this.policyAtToolCall(toolName);
      const steered = decision?.permissionDecision === 'deny' ? undefined : await this.steerAtToolBoundary();
      if (!decision && !steered) return {};
      return { hookSpecificOutput: { hookEventName: 'PreToolUse' as const, ...decision, ...steered } };
    };
    const options: Options = {
      cwd: start.cwd,
      env: start.env,
      abortController: this.controller,
      includePartialMessages: true,
      permissionMode: 'default',
      // Isolation: no settings, hooks or permission rules from files (a workspace's own
      // `.claude/` could run commands or allow tools); the product's policy is the only one.
      settingSources: [],
      canUseTool: this.askPerson,
      hooks: { PreToolUse: [{ hooks: [toolCallHook] }] },
      // A5: an `off` tool is not offered; the rest of the chat's settings are permission rules,
      // replaced live as they change (`applyPolicy`).
      ...(start.policy.deny.length > 0 ? { disallowedTools: start.policy.deny } : {}),
      settings: { permissions: { ...start.policy } },
      ...(start.model ? { model: start.model } : {}),
      ...(start.resume ? { resume: start.resume } : {}),
      ...(start.resume && start.forkAt ? { forkSession: true, resumeSessionAt: start.forkAt } : {}),
      ...(start.stderr ? { stderr: start.stderr } : {}),
    };
    this.query = start.query({ prompt: this.input, options });
    void this.pump();
  }

  /** Running a turn, or waiting for a person's decision on a tool call: never closed for room. */
  get busy(): boolean {
    return this.active !== undefined || this.approval !== undefined;
  }

  /** Whether the session waits for the decision on the call `token` names. */
  awaits(token: string): boolean {
    return this.approval?.token === token;
  }

  /**
   * A5: the run that goes on once a person decided on the tool call the session waits for: the
   * agent runs the tool (approved) or reads that it was denied, and the reply goes on.
   */
  resume(turn: DriverTurn, decision: 'approve' | 'deny'): TurnChannel {
    const approval = this.approval;
    if (!approval) throw new AgentStopped('no approval waits');
    this.approval = undefined;
    const channel: TurnChannel = new AsyncChannel<DriverEvent>();
    const active: ActiveTurn = {
      turn,
      channel,
      adapter: approval.adapter,
      tokenSent: false,
      boundary: undefined,
      steering: true,
    };
    this.active = active;
    this.lastUsed = Date.now();
    if (this.sessionId) this.sendToken(active, this.sessionId);
    if (decision === 'deny') approval.adapter.deny(approval.toolCallId);
    approval.decide(
      decision === 'approve'
        ? { behavior: 'allow', toolUseID: approval.toolCallId }
        : { behavior: 'deny', message: TOOL_DENIED_BY_PERSON, toolUseID: approval.toolCallId },
    );
    return channel;
  }

  /** Forgets the call waiting for a person (its turn was stopped): denied, and the session closed. */
  discard(token: string): void {
    if (!this.awaits(token)) return;
    this.approval?.decide({ behavior: 'deny', message: TOOL_DENIED_BY_PERSON, interrupt: true });
    this.approval = undefined;
    this.close();
  }

  /**
   * A5: a tool call the agent may not make without a person. The running turn ends suspended on
   * it (the host records the approval request and blocks the queue); the agent waits here.
   */
  private readonly askPerson: CanUseTool = async (toolName, input, options) => {
    const active = this.active;
    const approved = this.approved;
    if (approved && approved.toolName === toolName && sameInput(input, approved.input)) {
      // A5: the call a person approved before the restart, made again: allowed, once.
      this.approved = undefined;
      return { behavior: 'allow', updatedInput: input, toolUseID: options.toolUseID };
    }
    if (!active || this.approval) return { behavior: 'deny', message: TOOL_DENIED_BY_PERSON };
    const token = approvalToken(this.sessionId);
    const decided = new Promise<PermissionResult>((resolve) => {
      this.approval = { token, toolCallId: options.toolUseID, adapter: active.adapter, decide: resolve };
      options.signal.addEventListener('abort', () =>
        resolve({ behavior: 'deny', message: TOOL_DENIED_BY_PERSON }),
      );
    });
    const call: SuspendedCall = { resumeToken: token, toolCallId: options.toolUseID, toolName, args: input };
    this.active = undefined;
    this.lastUsed = Date.now();
    active.steering = false;
    active.channel.push({ type: 'suspended', call });
    active.channel.end();
    return await decided;
  };

  /**
   * A5, after a restart: the person decided on a call a session of an earlier process waited
   * for. This session (resumed from the one that asked) is told the decision: approved, it is to
   * make exactly that call again, and only that call is allowed without asking, once; denied, it
   * goes on without it. The reply the host shows goes on, the call's card the approved one's.
   */
  decideAfterRestart(
    turn: DriverTurn,
    call: { toolCallId: string; toolName: string; args: unknown },
    decision: 'approve' | 'deny',
  ): TurnChannel {
    const adapter = new TurnStreamAdapter({ continuing: true });
    const channel = this.start(turn, adapter);
    if (decision === 'approve') {
      this.approved = { toolName: call.toolName, input: call.args };
      adapter.expectApproved({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.args });
    } else {
      channel.push({ type: 'chunk', chunk: { type: 'tool-output-denied', toolCallId: call.toolCallId } });
    }
    this.input.push({ type: 'user', message: decisionMessage(call, decision), parent_tool_use_id: null });
    return channel;
  }

  /** Runs one turn on the session: its message goes into the agent's input queue. */
  run(turn: DriverTurn, message: SDKUserMessage['message']): TurnChannel {
    const channel = this.start(turn, new TurnStreamAdapter());
    this.input.push({ type: 'user', message, parent_tool_use_id: null });
    return channel;
  }

  private start(turn: DriverTurn, adapter: TurnStreamAdapter): TurnChannel {
    const channel: TurnChannel = new AsyncChannel<DriverEvent>();
    const active: ActiveTurn = {
      turn,
      channel,
      adapter,
      tokenSent: false,
      boundary: undefined,
      steering: true,
    };
    this.active = active;
    this.lastUsed = Date.now();
    // A running session already knows its id: the run's first event, as every driver's.
    if (this.sessionId && !this.resuming) this.sendToken(active, this.sessionId);
    return channel;
  }

  /** Until the binary reports its own id, a resumed session's id is only what it was asked to resume. */
  private resuming = true;

  /** Ends the session: the binary is stopped; a turn still running ends with an error. */
  close(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.approval?.decide({ behavior: 'deny', message: TOOL_DENIED_BY_PERSON, interrupt: true });
    this.approval = undefined;
    this.input.end();
    this.controller.abort();
    this.endActive(reason);
    this.onEnd();
  }

  /** Stops the turn running now (S1): the agent is interrupted, and the session closed with it. */
  stopTurn(turn: DriverTurn): void {
    if (this.active?.turn !== turn) return;
    const active = this.active;
    active.steering = false;
    this.sendEndToken(active);
    active.channel.end();
    this.active = undefined;
    this.approved = undefined;
    // The interrupted turn's partial is the host's; the session resumes from its token next time.
    void this.query.interrupt().catch(() => undefined);
    this.close();
  }

  /** Ends the turn's events without stopping the agent (the host let go of the connection). */
  release(turn: DriverTurn): void {
    if (this.active?.turn !== turn) return;
    // A turn given up before its end cannot be told apart from one still running: close it all.
    this.stopTurn(turn);
  }

  private sendToken(active: ActiveTurn, token: string) {
    if (active.tokenSent) return;
    active.tokenSent = true;
    active.channel.push({ type: 'resume-token', token });
  }

  /**
   * A7: the token again as the reply ends, with the chain entry it ended at, so a version made
   * from the message after this reply forks the session there. The host keeps the newest one.
   */
  private sendEndToken(active: ActiveTurn) {
    if (!this.sessionId || this.resuming) return;
    active.channel.push({
      type: 'resume-token',
      token: tokenOf({ sessionId: this.sessionId, ...(this.lastEntry ? { at: this.lastEntry } : {}) }),
    });
  }

  private endActive(reason?: Error) {
    const active = this.active;
    this.active = undefined;
    this.approved = undefined;
    if (!active) return;
    active.steering = false;
    this.sendEndToken(active);
    if (reason) active.channel.push({ type: 'error', error: reason });
    active.channel.end();
  }

  /**
   * A5: the chat's tool settings applied to the running agent (its permission rules replaced
   * live). Throws when the agent refuses them: the caller ends the session, so nothing runs on
   * under the old rules.
   */
  async applyPolicy(policy: AgentPolicy): Promise<void> {
    const signature = signatureOf(policy);
    if (signature === this.applied) return;
    await this.query.applyFlagSettings({ permissions: { ...policy } });
    this.applied = signature;
  }

  /**
   * A5: at each tool call, the chat's tool settings of now, read again and applied, and this call
   * decided by them (`off`: denied, `ask`: the person is asked, `allow`: it runs); a tool the chat
   * did not set is left to the agent's rules. Settings that cannot be read or applied end the
   * session (the turn fails): it never runs on under the old ones.
   */
  private async policyAtToolCall(toolName: string) {
    const active = this.active;
    if (!active?.turn.toolModes) return undefined;
    let mode: ToolMode | undefined;
    try {
      const modes = await active.turn.toolModes();
      await this.applyPolicy(policyOf(modes));
      mode = modes[toolName];
    } catch (error) {
      this.close(new AgentStopped("the chat's tool settings could not be applied", { cause: error }));
      return { permissionDecision: 'deny' as const, permissionDecisionReason: TOOL_DENIED_BY_PERSON };
    }
    if (mode === 'off')
      return { permissionDecision: 'deny' as const, permissionDecisionReason: TOOL_OFF_REASON };
    if (mode === 'allow') return { permissionDecision: 'allow' as const };
    if (mode === 'ask') return { permissionDecision: 'ask' as const };
    return undefined;
  }

  /** A4: at each tool call, the steers of now, as the product's steer reminder for the agent. */
  private async steerAtToolBoundary() {
    const active = this.active;
    if (!active?.steering) return undefined;
    const steers = await active.turn.takeSteers();
    if (steers.length === 0 || this.active !== active) return undefined;
    const known = active.boundary?.steers ?? [];
    active.boundary = {
      steers: [...known, ...steers],
      continuationMessageId: active.boundary?.continuationMessageId ?? crypto.randomUUID(),
    };
    return { additionalContext: steerReminder(steers.map((steer) => steer.text)) };
  }

  private async pump(): Promise<void> {
    try {
      for await (const message of this.query) {
        const active = this.active;
        if (message.type === 'system' && message.subtype === 'init') {
          this.sessionId = message.session_id;
          this.resuming = false;
          if (active) this.sendToken(active, message.session_id);
          continue;
        }
        if ((message.type === 'assistant' || message.type === 'user') && !message.parent_tool_use_id) {
          if (message.uuid) this.lastEntry = message.uuid;
        }
        if (!active) continue;
        const adapted = active.adapter.adapt(message);
        if (adapted.kind === 'none' || adapted.kind === 'session') continue;
        if (adapted.kind === 'call-start' && active.boundary) {
          // Steers taken in at the tool boundary: what came before is one message, then the roll.
          const [close, ...open] = adapted.chunks;
          if (close?.type === 'finish-step') active.channel.push({ type: 'chunk', chunk: close });
          active.channel.push({ type: 'steer-boundary', ...active.boundary });
          active.boundary = undefined;
          for (const chunk of close?.type === 'finish-step' ? open : adapted.chunks) {
            active.channel.push({ type: 'chunk', chunk });
          }
          continue;
        }
        for (const chunk of adapted.chunks) active.channel.push({ type: 'chunk', chunk });
        if (adapted.kind === 'compacted') active.channel.push({ type: 'compacted' });
        else if (adapted.kind === 'done') {
          this.sendEndToken(active);
          if (adapted.usage) active.channel.push({ type: 'usage', usage: adapted.usage });
          active.channel.push({ type: 'turn-complete', saved: true });
          this.finishTurn(active);
        } else if (adapted.kind === 'failed') {
          this.sendEndToken(active);
          active.channel.push({ type: 'error', error: adapted.error });
          this.finishTurn(active);
        }
      }
      this.close(new AgentStopped('the agent ended its session'));
    } catch (error) {
      this.close(new AgentStopped('the agent stopped', { cause: error }));
    }
  }

  private finishTurn(active: ActiveTurn) {
    if (this.active !== active) return;
    this.active = undefined;
    // An approved call the agent did not make again in its run is not allowed later.
    this.approved = undefined;
    this.lastUsed = Date.now();
    active.steering = false;
    active.channel.end();
  }
}

/**
 * A suspended call's resume token names the approval it waits on and the session that asked
 * (`claude-code-approval:<approval>:<session id>`), so a decision after a restart resumes that
 * session (A5); another driver's token is told apart.
 */
const APPROVAL_TOKEN = 'claude-code-approval:';

function approvalToken(sessionId: string | undefined): string {
  return `${APPROVAL_TOKEN}${crypto.randomUUID()}${sessionId ? `:${sessionId}` : ''}`;
}

/** The session an approval's token names; undefined for another driver's token or one without. */
export function sessionOfApproval(token: string): string | undefined {
  if (!token.startsWith(APPROVAL_TOKEN)) return undefined;
  const sessionId = token.slice(APPROVAL_TOKEN.length).split(':')[1];
  return pointOf(sessionId)?.sessionId;
}

/**
 * What the agent reads of a decision made after its session was restarted (A5): the call's input
 * as JSON after `Approved call:` (the one call it may then make without asking).
 */
function decisionMessage(
  call: { toolName: string; args: unknown },
  decision: 'approve' | 'deny',
): SDKUserMessage['message'] {
  const text =
    decision === 'approve'
      ? [
          `The person approved your ${call.toolName} call. It did not run: your session was restarted while it waited for the decision.`,
          'Make exactly that call again now, with the same input, then go on with what you were doing.',
          `Approved call: ${JSON.stringify({ name: call.toolName, input: call.args })}`,
        ].join('\n')
      : `The person denied your ${call.toolName} call; it did not run. Go on without it.`;
  return {
    role: 'user',
    content: [{ type: 'text', text: `<system-reminder>\n${text}\n</system-reminder>` }],
  };
}

/** What the agent reads of a tool call the person denied (the same words as the chat's tools). */
export const TOOL_DENIED_BY_PERSON = 'The person denied this tool call; it did not run.';

/**
 * The binary ended (or could not start) while a turn ran: the person reads the product's words;
 * what happened (`cause`, `detail`) goes to the log.
 */
export class AgentStopped extends WordedFailure {
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(turnErrorMessages.agentStopped, options);
  }
}
