import { isReconnecting } from '~/threadPage/reducer';
import {
  composerView,
  dockView,
  finishedAnnouncement,
  noticeMessage,
  transcriptStatus,
  versionsView,
} from '~/threadPage/views';
import { approvalsKey, useApprovals } from './useApprovals';
import { useFeedback } from './useFeedback';
import { useQueueCommands } from './useQueueCommands';
import { useThreadEvents } from './useThreadEvents';
import { useThreadStore } from './useThreadStore';
import { useTurnStreams } from './useTurnStreams';
import { useVersionCommands } from './useVersionCommands';

/**
 * One open thread, for its page: the store (state, reducer, effects), the thread's events
 * stream feeding it, and the person's commands. Components render only from the state, through
 * the views here; every command reports to the store, which decides what follows.
 */
export function useThreadPage(threadId: string) {
  const store = useThreadStore(threadId);
  const streams = useTurnStreams(store);
  const queue = useQueueCommands(store, streams);
  const versions = useVersionCommands(store, streams);
  const feedback = useFeedback(store);
  provide(approvalsKey, useApprovals(store, streams));

  const events = useThreadEvents(threadId, {
    onEvent: (event) => store.dispatch({ type: 'server', event }),
    onConnected: () => store.dispatch({ type: 'events.connected' }),
    onDisconnected: () => store.dispatch({ type: 'events.disconnected' }),
  });

  const state = store.state;

  /** Subscribes first, then loads (the first detail read is the state's first effect), so no event between the two is lost. */
  async function open(): Promise<void> {
    events.open();
    store.start();
    await until(() => state.value.load.phase !== 'loading');
  }

  function until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = watch(state, () => {
        if (!done()) return;
        stop();
        resolve();
      });
    });
  }

  return {
    open,
    state,
    reconnecting: computed(() => isReconnecting(state.value)),
    status: computed(() => transcriptStatus(state.value)),
    composer: computed(() => composerView(state.value)),
    dock: computed(() => dockView(state.value)),
    versions: computed(() => versionsView(state.value)),
    notice: computed(() => ({
      message: noticeMessage(state.value),
      retryable: state.value.notice?.retryable ?? false,
    })),
    /** What the live region says when a reply finishes (changes once per finished reply). */
    finished: computed(() => ({
      seq: state.value.lastFinished?.seq ?? 0,
      text: finishedAnnouncement(state.value),
    })),
    send: streams.send,
    stop: streams.stop,
    retryNotice: streams.retryNotice,
    dismissNotice: () => store.dispatch({ type: 'notice.dismissed' }),
    queue,
    versionCommands: versions,
    feedback,
  };
}
