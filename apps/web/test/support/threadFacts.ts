import type {
  ChatMessage,
  ContextState,
  HitlRequest,
  ThreadDetail,
  ThreadEvent,
  Turn,
  TurnQueue,
  TurnStatus,
} from '@chat/contracts';
import { effectsOf, type ThreadPageEffect } from '../../app/threadPage/effects';
import type { ThreadPageEvent } from '../../app/threadPage/events';
import { reduceThreadPage } from '../../app/threadPage/reducer';
import { initialThreadPageState, type ThreadPageState } from '../../app/threadPage/state';
import type { ChatUIMessage } from '../../app/utils/chatMessages';

/** Server facts as the API sends them, built small, for feeding the chat page's reducer. */

export const THREAD = 'thread-1';
export const BRANCH = 'branch-1';

export function turn(
  id: string,
  status: TurnStatus,
  text = `text of ${id}`,
  extra: Partial<Turn> = {},
): Turn {
  return {
    id,
    threadId: THREAD,
    branchId: BRANCH,
    status,
    text,
    clientRequestId: `request-${id}`,
    createdAt: '2026-12-01T10:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    error: null,
    steer: false,
    attachments: [],
    ...extra,
  };
}

export function queueOf(active: Turn | null, items: Turn[] = [], paused = false): TurnQueue {
  return { activeTurn: active, items, paused };
}

/** A finished exchange as the server stores it: the user message and the reply of `turnId`. */
export function exchange(turnId: string, words = 'an answer'): ChatMessage[] {
  return [
    {
      id: `user-${turnId}`,
      role: 'user',
      parts: [{ type: 'text', text: `text of ${turnId}` }],
      metadata: {},
    },
    {
      id: `reply-${turnId}`,
      role: 'assistant',
      parts: [{ type: 'text', text: words }],
      metadata: { turnId, model: 'local' },
    },
  ];
}

/** The context meter as the server says it (C2): `used` of an 8,000-token window. */
export function contextOf(used: number, marker: ContextState['marker'] = null): ContextState {
  return { window: 8_000, used, compactAt: 0.8, marker };
}

export function detail(
  messages: ChatMessage[],
  turnQueue: TurnQueue = queueOf(null),
  hitl: HitlRequest[] = [],
  context: ContextState = contextOf(100),
): ThreadDetail {
  return {
    thread: {
      id: THREAD,
      title: 'A chat',
      activeBranchId: BRANCH,
      createdAt: '2026-12-01T10:00:00.000Z',
      updatedAt: '2026-12-01T10:00:00.000Z',
      drainMode: 'viewer',
    },
    messages,
    turnQueue,
    hitl,
    notes: [],
    context,
    tools: [
      { name: 'current_time', description: 'The time.', mode: 'allow', defaultMode: 'allow' },
      { name: 'save_note', description: 'A note.', mode: 'ask', defaultMode: 'ask' },
    ],
    toolServers: [],
  };
}

export function server(event: ThreadEvent): ThreadPageEvent {
  return { type: 'server', event };
}

export function settled(
  settledTurn: Turn,
  turnQueue: TurnQueue,
  messages?: ChatMessage[],
  context?: ContextState,
): ThreadPageEvent {
  return server({
    type: 'turn.settled',
    threadId: THREAD,
    turn: settledTurn,
    turnQueue,
    messages,
    ...(context ? { context } : {}),
  });
}

export function queueChanged(turnQueue: TurnQueue): ThreadPageEvent {
  return server({ type: 'queue.changed', threadId: THREAD, turnQueue });
}

export function started(startedTurn: Turn, turnQueue: TurnQueue): ThreadPageEvent {
  return server({ type: 'turn.started', threadId: THREAD, turn: startedTurn, turnQueue });
}

/** The reply of a turn as a stream snapshot carries it. */
export function streamed(turnId: string, text: string, parts: ChatUIMessage['parts'] = []): ThreadPageEvent {
  return {
    type: 'stream.message',
    turnId,
    message: {
      id: `reply-${turnId}`,
      role: 'assistant',
      parts: [{ type: 'text', text }, ...parts],
      metadata: {},
    },
  };
}

export function approval(id: string, turnId: string, status: HitlRequest['status'] = 'pending'): HitlRequest {
  return {
    id,
    turnId,
    toolName: 'save_note',
    toolCallId: `call-${id}`,
    args: { text: 'milk' },
    status,
    createdAt: '2026-12-01T10:00:00.000Z',
    decidedAt: null,
  };
}

/**
 * A page fed events in order. Effects it asks for are recorded; `run` plays the effect's own first
 * event the way the store does (a detail read goes out, an attach shows the turn), so a sequence
 * reads like what happens in the browser.
 */
export class Page {
  state: ThreadPageState = initialThreadPageState(THREAD);

  feed(...events: ThreadPageEvent[]): this {
    for (const event of events) this.state = reduceThreadPage(this.state, event);
    return this;
  }

  /** The effects asked for, but the thread list's refresh (tested on its own). */
  effects(): ThreadPageEffect[] {
    return effectsOf(this.state).filter((effect) => effect.type !== 'refreshThreadList');
  }

  effectTypes(): string[] {
    return this.effects().map((effect) => effect.type);
  }

  /** Answers the detail read the state asks for with `answer` (as the store sends and applies it). */
  readDetail(answer: ThreadDetail): this {
    const request = this.sendDetailRead();
    return this.feed({ type: 'detail.answered', ...request, detail: answer });
  }

  /** Sends the detail read the state asks for; its answer comes later (`detail.answered`). */
  sendDetailRead(): { request: number; at: ThreadPageState['facts'] } {
    if (!this.effectTypes().includes('readDetail'))
      throw new Error(`no detail read wanted: ${this.effectTypes()}`);
    this.feed({ type: 'detail.requested' });
    return { request: this.state.detail.latest, at: { ...this.state.facts } };
  }

  /** The page is open: its events stream connected and its first detail arrived. */
  static opened(answer: ThreadDetail): Page {
    return new Page().feed({ type: 'events.connected' }).readDetail(answer);
  }
}
