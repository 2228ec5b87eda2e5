import { mkdir } from 'node:fs/promises';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { turnErrorMessages } from '@chat/contracts';
import { WordedFailure } from '../../../../platform/errors';
import type { Logger } from '../../../../platform/logger';
import { hiddenInstructions } from '../hiddenInstructions';
import type { DriverEvent, DriverTurn, RuntimeConnection, RuntimeDriver } from '../types';
import { type AgentPolicy, AgentSession, AgentStopped, policyOf, sessionOfApproval } from './agentSession';
import { pointOf } from './sessionToken';

/** What the Claude Code driver is configured with (platform/config.ts: `AGENT_*`). */
export interface ClaudeCodeDriverOptions {
  /**
   * The binary's own directory for sessions and settings (`CLAUDE_CONFIG_DIR`, and its HOME): the
   * deployment's data directory, never a person's home, so deployments and test runs never share.
   */
  configDir: string;
  /** The workspace a turn's agent works in (an agent chat's; A1). Throws when there is none. */
  workspaceOf(turn: DriverTurn): Promise<string>;
  /** The model the agent is asked for; unset: the binary's default. */
  model?: string;
  /** The Messages API the agent talks to, and its key (never from the browser). */
  baseUrl?: string;
  apiKey?: string;
  /** Whether a chat's model id (M2) is still configured: a removed one fails the run. */
  hasModel(id: string): boolean;
  /** How long a session stays after a turn, for the chat's next message (A2). */
  idleMs: number;
  /** Most sessions running at once on this instance; past it the least recently used idle one is parked. */
  maxSessions: number;
  logger?: Logger;
}

/**
 * The Claude Code runtime driver (A1-A3): one long-lived `AgentSession` per active conversation,
 * kept for an idle window after each turn so the chat's next message reaches the same running
 * agent, then closed; at most `maxSessions` at once (the least recently used idle one is parked:
 * closed, to resume from its token on its next message). The session id is the resume token: a
 * session starts from `turn.resumeFrom` (the token kept on the conversation's newest final
 * reply), else fresh. Steers are taken in at the agent's next tool call (a `PreToolUse` hook); a
 * steer no tool call met is left to the host, which queues it first. Stop interrupts the agent and
 * closes its session (the next message resumes it).
 */
export class ClaudeCodeDriver implements RuntimeDriver {
  readonly resumesSessions = true;
  private readonly sessions = new Map<string, AgentSession>();
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: ClaudeCodeDriverOptions) {}

  async send(turn: DriverTurn): Promise<RuntimeConnection> {
    const events = this.run(turn);
    return {
      events,
      steerable: true,
      close: () => {
        this.sessions.get(turn.conversation.id)?.release(turn);
        void events.return(undefined);
      },
    };
  }

  async discard(resumeToken: string): Promise<void> {
    for (const session of this.sessions.values()) session.discard(resumeToken);
  }

  /** Closes every session (the API is stopping). */
  async close(): Promise<void> {
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    for (const session of [...this.sessions.values()]) session.close();
  }

  private async *run(turn: DriverTurn): AsyncGenerator<DriverEvent> {
    if (turn.model && !this.options.hasModel(turn.model)) {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.modelRemoved(turn.model)) };
      return;
    }
    if (turn.segment.kind === 'resume') {
      yield* this.resumeAfterDecision(turn, turn.segment);
      return;
    }
    yield* this.underPolicy(turn, undefined, (session) => session.run(turn, userMessage(turn)));
  }

  /**
   * A5: the run after a person decided on the tool call a session waits for. This instance's
   * running session, when it waits for it, takes the decision where it waits. Otherwise (a
   * restart of the API, or the session ended meanwhile) the session that asked is resumed from
   * the approval's token and told the decision (`decideAfterRestart`); a token that names no
   * session fails the turn in words that say so.
   */
  private async *resumeAfterDecision(
    turn: DriverTurn,
    segment: Extract<DriverTurn['segment'], { kind: 'resume' }>,
  ): AsyncGenerator<DriverEvent> {
    const key = turn.conversation.id;
    const session = this.sessions.get(key);
    if (!session?.awaits(segment.call.resumeToken)) {
      yield* this.decideAfterRestart(turn, segment);
      return;
    }
    yield* this.onSession(turn, session, () => session.resume(turn, segment.decision));
  }

  private async *decideAfterRestart(
    turn: DriverTurn,
    segment: Extract<DriverTurn['segment'], { kind: 'resume' }>,
  ): AsyncGenerator<DriverEvent> {
    const asked = sessionOfApproval(segment.call.resumeToken);
    if (!asked) {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.agentApprovalLost) };
      return;
    }
    yield* this.underPolicy(turn, asked, (session) =>
      session.decideAfterRestart(turn, segment.call, segment.decision),
    );
  }

  /**
   * A run on the session for `turn` under the chat's tool settings (`sessionUnderPolicy`; `asked`:
   * the session an approval named), or the error the run ends with when none could be had.
   */
  private async *underPolicy(
    turn: DriverTurn,
    asked: string | undefined,
    run: (session: AgentSession) => AsyncIterable<DriverEvent>,
  ): AsyncGenerator<DriverEvent> {
    let session: AgentSession;
    try {
      session = await this.sessionUnderPolicy(turn, asked);
    } catch (error) {
      yield {
        type: 'error',
        error: error instanceof WordedFailure ? error : new AgentStopped('no start', { cause: error }),
      };
      return;
    }
    yield* this.onSession(turn, session, run);
  }

  /** A run on `session`: Stop stops the turn there; after it, a session still open idles for the next. */
  private async *onSession(
    turn: DriverTurn,
    session: AgentSession,
    run: (session: AgentSession) => AsyncIterable<DriverEvent>,
  ): AsyncGenerator<DriverEvent> {
    const stop = () => session.stopTurn(turn);
    turn.abortSignal.addEventListener('abort', stop, { once: true });
    try {
      yield* run(session);
    } finally {
      turn.abortSignal.removeEventListener('abort', stop);
      if (!session.closed) this.idleAfterTurn(turn.conversation.id, session);
    }
  }

  /**
   * The session for a run, under the chat's tool settings of now (A5): read as the run starts
   * (and again at each tool call), so a change since the last run is applied before the agent
   * reads the message. Settings that cannot be read start nothing; a running session that
   * refuses them is closed: nothing runs on under the old ones (the run fails).
   */
  private async sessionUnderPolicy(turn: DriverTurn, asked?: string): Promise<AgentSession> {
    const policy = policyOf((await turn.toolModes?.()) ?? {});
    const session = await this.sessionFor(turn, policy, asked);
    try {
      await session.applyPolicy(policy);
    } catch (error) {
      session.close();
      throw new AgentStopped("the chat's tool settings could not be applied", { cause: error });
    }
    return session;
  }

  /**
   * The conversation's running session, or a new one resumed from its kept token. `asked`: the
   * session a decision after a restart goes to (A5), resumed from its id whatever runs now. A
   * session started with other tools not offered is replaced (`disallowedTools` is fixed).
   */
  private async sessionFor(turn: DriverTurn, policy: AgentPolicy, asked?: string): Promise<AgentSession> {
    const key = turn.conversation.id;
    const timer = this.idleTimers.get(key);
    if (timer) clearTimeout(timer);
    this.idleTimers.delete(key);
    const running = this.sessions.get(key);
    // A session still busy with an earlier run (one given up on) is not shared: it is closed.
    const offersAsNow = running?.notOffered === JSON.stringify(policy.deny);
    if (running && !running.closed && !running.busy && !asked && offersAsNow && sameSession(running, turn))
      return running;
    // A7: a version with no token of its own forks the session of the reply before its message.
    const fork = turn.resumeFrom || asked ? undefined : pointOf(turn.forkFrom);
    const resume = asked ?? fork?.sessionId ?? pointOf(turn.resumeFrom ?? running?.sessionId)?.sessionId;
    running?.close();
    const cwd = await this.options.workspaceOf(turn);
    await mkdir(this.options.configDir, { recursive: true });
    this.parkIdleSessions();
    const { query } = await agentSdk();
    const session: AgentSession = new AgentSession(
      {
        query,
        cwd,
        env: this.environment(),
        policy,
        ...(this.options.model ? { model: this.options.model } : {}),
        // A fork needs the entry its reply ended at; a token without one starts fresh.
        ...(fork ? (fork.at ? { resume, forkAt: fork.at } : {}) : resume ? { resume } : {}),
        // Its words may quote the conversation: the log gets only that it wrote.
        stderr: (line) =>
          this.options.logger?.debug({ conversationId: key, bytes: line.length }, 'agent wrote to stderr'),
      },
      () => {
        if (this.sessions.get(key) === session) this.sessions.delete(key);
      },
    );
    this.sessions.set(key, session);
    return session;
  }

  /** A2: the session stays for the chat's next message, then it is closed. */
  private idleAfterTurn(key: string, session: AgentSession) {
    const timer = setTimeout(() => {
      this.idleTimers.delete(key);
      if (!session.busy) session.close();
    }, this.options.idleMs);
    timer.unref();
    this.idleTimers.set(key, timer);
  }

  /** A2: room for one more session, by parking the least recently used idle ones. */
  private parkIdleSessions() {
    const idle = [...this.sessions.entries()]
      .filter(([, session]) => !session.busy)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    while (this.sessions.size >= this.options.maxSessions && idle.length > 0) {
      const [key, session] = idle.shift() as [string, AgentSession];
      clearTimeout(this.idleTimers.get(key));
      this.idleTimers.delete(key);
      session.close();
    }
  }

  /**
   * The binary's environment: only what it needs, never the API's own (its database URL, its auth
   * secret). Non-essential traffic (telemetry, update checks) is off on a server.
   */
  private environment(): Record<string, string | undefined> {
    const { configDir, baseUrl, apiKey } = this.options;
    return {
      PATH: process.env.PATH,
      LANG: process.env.LANG,
      HOME: configDir,
      CLAUDE_CONFIG_DIR: configDir,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_AGENT_SDK_CLIENT_APP: 'queued-turn-chat',
      ...(baseUrl ? { ANTHROPIC_BASE_URL: baseUrl } : {}),
      ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}),
    };
  }
}

/**
 * The SDK, loaded when the first agent session starts: a deployment without agent chats (or one
 * whose agents never ran) never pays for it (about 10 MB and 0.2 s per API process).
 */
let sdk: Promise<typeof import('@anthropic-ai/claude-agent-sdk')> | undefined;
const agentSdk = () => {
  sdk ??= import('@anthropic-ai/claude-agent-sdk');
  return sdk;
};

/**
 * A running session serves the turn unless the turn asks to resume another session, or to fork
 * one (a version that kept no token yet).
 */
function sameSession(session: AgentSession, turn: DriverTurn): boolean {
  if (!turn.resumeFrom) return !turn.forkFrom;
  return !session.sessionId || pointOf(turn.resumeFrom)?.sessionId === session.sessionId;
}

/** The turn's message for the agent: the hidden instructions of this run first, then the person's text. */
function userMessage(turn: DriverTurn): SDKUserMessage['message'] {
  // The agent keeps its own conversation: no summary of the host's window goes with it.
  const hidden = hiddenInstructions({ ...turn, history: { messages: 0, summary: null } });
  return {
    role: 'user',
    content: [
      ...(hidden.length > 0
        ? [{ type: 'text' as const, text: `<system-reminder>\n${hidden.join('\n\n')}\n</system-reminder>` }]
        : []),
      { type: 'text' as const, text: turn.message.text },
    ],
  };
}
