import type { DrainMode, Thread } from '@chat/contracts';
import { seenReplyToRemember } from '~/threadPage/views';
import { refusalOf, type ThreadStore } from './useThreadStore';

/** Where this browser keeps the last reply the person saw of a chat. */
const seenKey = (threadId: string) => `chat.seenReply.${threadId}`;
/** What is stored for a chat seen before it had any reply. */
const NO_REPLY = '';

/**
 * Q15: who runs the chat's queue (the Dock's "Keep going when I leave"), and the page's side of
 * hearing about work done while the person was away: whether the page is visible, and the last
 * reply they saw, kept in this browser so the divider finds its place when they come back. The
 * decisions (the title's count, the notifications, the divider) are the page state's.
 */
export function useAwayFromChat(store: ThreadStore) {
  const { dispatch, state } = store;

  /** Before the first load: what the person saw on their last visit, if this browser showed it. */
  function restore(): void {
    const stored = readStorage(seenKey(store.threadId));
    if (stored !== null) dispatch({ type: 'seen.restored', replyId: stored === NO_REPLY ? null : stored });
  }

  function followVisibility(): void {
    const report = () =>
      dispatch({ type: 'page.visibility', visible: document.visibilityState === 'visible' });
    report();
    document.addEventListener('visibilitychange', report);
    onScopeDispose(() => document.removeEventListener('visibilitychange', report));
  }

  watch(
    () => seenReplyToRemember(state.value),
    (seen) => {
      if (seen !== undefined) writeStorage(seenKey(store.threadId), seen ?? NO_REPLY);
    },
  );

  /**
   * The switch: turning it on asks for notification permission first (the click is what allows the
   * browser to ask), then the server stores the choice; other tabs follow its `thread.changed`.
   */
  async function setDrainMode(mode: DrainMode): Promise<void> {
    const asking = mode === 'background' ? askToNotify() : Promise.resolve(false);
    dispatch({ type: 'drainMode.requested', mode });
    try {
      const thread = await apiJson<Thread>(store.base, { method: 'PATCH', json: { drainMode: mode } });
      dispatch({ type: 'drainMode.answered', thread });
    } catch (error) {
      dispatch({ type: 'drainMode.refused', error: refusalOf(error) });
    }
    await asking;
  }

  return { restore, followVisibility, setDrainMode };
}

function readStorage(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeStorage(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // Storage full or blocked: the divider is a comfort, nothing depends on it.
  }
}
