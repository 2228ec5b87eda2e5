import type { ThreadDetail } from '@chat/contracts';
import type { ShallowRef } from 'vue';
import { effectsOf, type ThreadPageEffect } from '~/threadPage/effects';
import type { ThreadPageEvent } from '~/threadPage/events';
import { reduceThreadPage } from '~/threadPage/reducer';
import { initialThreadPageState, type Refusal, type ThreadPageState } from '~/threadPage/state';

/** How long the end of a stream waits for its turn's settle event before reading the detail. */
const SETTLE_EVENT_WAIT_MS = 2_000;

/**
 * The chat page's store: the state (`~/threadPage/state`), `dispatch` (the reducer makes the next
 * state), and the effects the state calls for (`effectsOf`), run after every event in one place.
 * The effects of turns (attach, claim) are handed to `runTurnEffect`, which the turn streams
 * provide; the others (detail reads, timers, the thread list) run here.
 */
export interface ThreadStore {
  threadId: string;
  /** `/api/threads/:id`. */
  base: string;
  state: Readonly<ShallowRef<ThreadPageState>>;
  dispatch: (event: ThreadPageEvent) => void;
  isDisposed: () => boolean;
  /** From now on the effects run (the page subscribes to the thread's events before this). */
  start: () => void;
  /** Sends a request that answers a whole detail (a read, a version switch or delete) and applies it. */
  requestDetail: (path: string, init?: ApiRequestInit) => Promise<void>;
  /** Set by the turn streams: runs an attach or a claim. */
  runTurnEffect: (effect: Extract<ThreadPageEffect, { type: 'attach' | 'claim' }>) => void;
}

export function useThreadStore(threadId: string): ThreadStore {
  const { refresh: refreshThreadList } = useThreads();
  const base = `/api/threads/${encodeURIComponent(threadId)}`;
  const state = shallowRef(initialThreadPageState(threadId));
  let disposed = false;
  let started = false;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const backoff = createBackoff();

  function dispatch(event: ThreadPageEvent): void {
    if (disposed) return;
    state.value = reduceThreadPage(state.value, event);
    scheduleEffects();
  }

  // Effects run once the current task's events are in (a burst of events decides once).
  let effectsScheduled = false;
  function scheduleEffects(): void {
    if (effectsScheduled || !started) return;
    effectsScheduled = true;
    queueMicrotask(() => {
      effectsScheduled = false;
      if (disposed) return;
      for (const effect of effectsOf(state.value)) run(effect);
    });
  }

  function run(effect: ThreadPageEffect): void {
    switch (effect.type) {
      case 'readDetail':
        void requestDetail(base).catch(() => undefined);
        return;
      case 'retryLoad':
        dispatch({ type: 'load.retryScheduled' });
        // The waits grow until a load answers (requestDetail resets them).
        backoff.after(() => dispatch({ type: 'load.retryDue' }));
        return;
      case 'waitForSettle': {
        const { turnId } = effect;
        dispatch({ type: 'settleWait.started', turnId });
        later(SETTLE_EVENT_WAIT_MS, () => dispatch({ type: 'settleWait.expired', turnId }));
        return;
      }
      case 'refreshThreadList':
        dispatch({ type: 'threadList.refreshed' });
        void refreshThreadList();
        return;
      case 'attach':
      case 'claim':
        store.runTurnEffect(effect);
        return;
      case 'notify':
        dispatch({ type: 'notification.shown', id: effect.notification.id });
        showAwayNotification(effect.notification, state.value.thread?.title ?? 'Chat', threadId);
        return;
    }
  }

  /**
   * A request that answers a thread detail: numbered, so an older answer never overwrites a newer
   * one, and tagged with the facts known when it went out (see the reducer's `detail.answered`).
   * Throws the refusal after it is recorded (a switch shows it on the banner).
   */
  async function requestDetail(path: string, init?: ApiRequestInit): Promise<void> {
    dispatch({ type: 'detail.requested' });
    const request = state.value.detail.latest;
    const at = { ...state.value.facts };
    let detail: ThreadDetail;
    try {
      detail = await apiJson<ThreadDetail>(path, init);
    } catch (error) {
      dispatch({ type: 'detail.failed', request, error: refusalOf(error), ofThread: path === base && !init });
      throw error;
    }
    if (state.value.load.phase !== 'ready') backoff.reset();
    dispatch({ type: 'detail.answered', request, at, detail });
  }

  function later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      task();
    }, ms);
    timers.add(timer);
  }

  onScopeDispose(() => {
    disposed = true;
    backoff.reset();
    for (const timer of timers) clearTimeout(timer);
  });

  const store: ThreadStore = {
    threadId,
    base,
    state,
    dispatch,
    isDisposed: () => disposed,
    start: () => {
      started = true;
      scheduleEffects();
    },
    requestDetail,
    runTurnEffect: () => undefined,
  };
  return store;
}

/** An error of any kind as the state keeps it. */
export function refusalOf(error: unknown): Refusal {
  const apiError = ApiRequestError.fromUnknown(error);
  return {
    message: apiError.message,
    status: apiError.status,
    code: apiError.code,
    retryable: apiError.retryable,
    ...(apiError.leftWaiting ? { leftWaiting: apiError.leftWaiting } : {}),
  };
}
