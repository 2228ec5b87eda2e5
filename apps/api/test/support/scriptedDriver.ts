import { turnErrorMessages } from '@chat/contracts';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { Memory } from '@mastra/memory';
import type { UIMessageChunk } from 'ai';
import type {
  DriverEvent,
  DriverTurn,
  RuntimeConnection,
  RuntimeDriver,
  SteerMessage,
} from '../../src/chats/turns/driver/types';
import { isDatabaseUnavailable } from '../../src/platform/databaseErrors';
import { WordedFailure } from '../../src/platform/errors';

/** What the scripted driver does with one message: decided by the test from the message text. */
export interface Script {
  /** Words of the reply (each `word<N>`). */
  words: number;
  /** Milliseconds before each word. */
  delayMs: number;
  /** The run fails after this many words. */
  failAfter?: number;
  /** A step boundary after every this many words, where a steer can be taken in. */
  stepEvery?: number;
  /**
   * After this many words the run goes silent for good, deaf to its abort signal too (a run that
   * hangs somewhere inside its runtime).
   */
  hangAfter?: number;
}

/**
 * A second runtime driver, for tests: it proves the seam is the runner's only way to a model. It
 * streams a fixed reply (`word1 word2 ...`) word by word, takes steers in at its step boundaries
 * (the seam's steering), fails on demand, and stores what it said in the conversation the way a
 * real runtime does (on every end, aborted and failed ones too). No model, no Mastra agent.
 */
export class ScriptedDriver implements RuntimeDriver {
  constructor(
    private readonly memory: Memory,
    private readonly script: (text: string) => Script,
    /** The configured models (M2): a run names one that is not among them fails. Left out: any. */
    private readonly models?: { has(id: string): boolean },
  ) {}

  async send(turn: DriverTurn): Promise<RuntimeConnection> {
    const steerable = turn.segment.kind === 'start';
    const events = this.run(turn, steerable);
    return { events, steerable, close: () => void events.return(undefined) };
  }

  async discard(): Promise<void> {
    // It never suspends: nothing to forget.
  }

  private async *run(turn: DriverTurn, steerable: boolean): AsyncGenerator<DriverEvent> {
    if (turn.model && this.models && !this.models.has(turn.model)) {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.modelRemoved(turn.model)) };
      return;
    }
    // Like a real runtime it reads the conversation first: a database away now stored nothing.
    try {
      await this.memory.getThreadById({ threadId: turn.conversation.id });
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      yield { type: 'unavailable', cause: error };
      return;
    }
    const script = this.script(turn.message.text);
    const stored: Array<{ id: string; role: 'user' | 'assistant'; text: string }> = [
      { id: turn.message.id, role: 'user', text: turn.message.text },
    ];
    let reply = { id: crypto.randomUUID(), role: 'assistant' as const, text: '' };
    stored.push(reply);
    yield { type: 'resume-token', token: crypto.randomUUID() };
    yield chunk({ type: 'start', messageId: reply.id });
    let textId = crypto.randomUUID();
    yield chunk({ type: 'text-start', id: textId });
    try {
      for (let index = 0; index < script.words; index++) {
        if (script.stepEvery && index > 0 && index % script.stepEvery === 0 && steerable) {
          const steers: SteerMessage[] = await turn.takeSteers();
          if (steers.length > 0) {
            yield chunk({ type: 'text-end', id: textId });
            const continuation = { id: crypto.randomUUID(), role: 'assistant' as const, text: '' };
            for (const steer of steers) stored.push({ id: steer.messageId, role: 'user', text: steer.text });
            stored.push(continuation);
            reply = continuation;
            yield { type: 'steer-boundary', steers, continuationMessageId: continuation.id };
            textId = crypto.randomUUID();
            yield chunk({ type: 'text-start', id: textId });
          }
        }
        if (script.hangAfter !== undefined && index === script.hangAfter) await new Promise(() => {});
        if (script.failAfter !== undefined && index === script.failAfter) {
          yield { type: 'error', error: new Error(`The scripted driver failed after ${index} words.`) };
          return;
        }
        await sleep(script.delayMs, turn.abortSignal);
        if (turn.abortSignal.aborted) return;
        const delta = `${index === 0 ? '' : ' '}word${index + 1}`;
        reply.text += delta;
        yield chunk({ type: 'text-delta', id: textId, delta });
      }
      yield chunk({ type: 'text-end', id: textId });
      yield chunk({ type: 'finish' });
      yield { type: 'turn-complete', saved: true };
    } finally {
      await this.store(turn, stored);
    }
  }

  /** What was said, as a runtime stores it: the user message, each reply with text, the steers. */
  private async store(
    turn: DriverTurn,
    messages: Array<{ id: string; role: 'user' | 'assistant'; text: string }>,
  ): Promise<void> {
    const { id: threadId, ownerId: resourceId } = turn.conversation;
    if (!(await this.memory.getThreadById({ threadId }))) {
      const now = new Date();
      await this.memory.saveThread({
        thread: { id: threadId, resourceId, title: '', createdAt: now, updatedAt: now, metadata: {} },
      });
    }
    const start = Date.now();
    const kept = messages.filter((message) => message.role === 'user' || message.text !== '');
    await this.memory.saveMessages({
      messages: kept.map(
        (message, index): MastraDBMessage => ({
          id: message.id,
          role: message.role,
          threadId,
          resourceId,
          createdAt: new Date(start + index),
          content: { format: 2, parts: [{ type: 'text', text: message.text }] },
        }),
      ),
    });
  }
}

function chunk(value: UIMessageChunk): DriverEvent {
  return { type: 'chunk', chunk: value };
}

/** Waits `ms`, or less when the run is aborted meanwhile. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
