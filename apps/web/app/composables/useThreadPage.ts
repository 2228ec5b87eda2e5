import { awayDividerBefore } from '~/threadPage/away';
import { isBusy } from '~/threadPage/queue';
import { isReconnecting } from '~/threadPage/reducer';
import type { ThreadPageState } from '~/threadPage/state';
import {
  composerView,
  contextMeterView,
  dockView,
  finishedAnnouncement,
  noticeView,
  pageTitle,
  toolSettingsView,
  transcriptStatus,
  unsettledTurnIds,
  versionsView,
} from '~/threadPage/views';
import { approvalsKey, useApprovals } from './useApprovals';
import { useAwayFromChat } from './useAwayFromChat';
import { useChatSettings } from './useChatSettings';
import { useContextCommands } from './useContextCommands';
import { useFeedback } from './useFeedback';
import { useQueueCommands } from './useQueueCommands';
import { useThreadEvents } from './useThreadEvents';
import { useThreadStore } from './useThreadStore';
import { useToolSettings } from './useToolSettings';
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
  const away = useAwayFromChat(store);
  const chatSettings = useChatSettings(store);
  const contextCommands = useContextCommands(store);
  const toolSettings = useToolSettings(store);
  provide(approvalsKey, useApprovals(store, streams));

  const events = useThreadEvents(threadId, {
    onEvent: (event) => store.dispatch({ type: 'server', event }),
    onConnected: () => store.dispatch({ type: 'events.connected' }),
    onDisconnected: () => store.dispatch({ type: 'events.disconnected' }),
  });

  const state = store.state;

  /** Subscribes first, then loads (the first detail read is the state's first effect), so no event between the two is lost. */
  async function open(): Promise<void> {
    away.restore();
    away.followVisibility();
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

  /**
   * A view that changes only when the parts of the state it reads change, so the Dock or the
   * composer do not re-render on every streamed delta (the state object is new on each event).
   */
  function viewOf<T>(
    parts: (current: ThreadPageState) => unknown[],
    derive: (current: ThreadPageState) => T,
  ) {
    let last: unknown[] | null = null;
    let value: T;
    return computed(() => {
      const now = parts(state.value);
      if (!last || now.length !== last.length || now.some((part, index) => part !== last?.[index])) {
        last = now;
        value = derive(state.value);
      }
      return value;
    });
  }
  const queueParts = (current: ThreadPageState) => [
    current.queue,
    current.thread?.drainMode,
    current.drainModeWanted,
    current.moves,
    current.selection,
    current.merging,
    current.attached,
    current.editing.queuedTurnId,
    isBusy(current),
  ];

  return {
    open,
    state,
    reconnecting: computed(() => isReconnecting(state.value)),
    status: computed(() => transcriptStatus(state.value)),
    composer: viewOf(
      (current) => [...queueParts(current), current.load, current.editing.messageId],
      composerView,
    ),
    dock: viewOf(queueParts, dockView),
    versions: viewOf(
      (current) => [
        current.versionChanges,
        current.editing.messageId,
        current.queue.items.length,
        isBusy(current),
      ],
      versionsView,
    ),
    /** Turns whose messages a new chat cannot start from yet (P3). */
    unsettled: viewOf((current) => [current.queue], unsettledTurnIds),
    notice: viewOf(
      (current) => [current.notice, current.shed, current.streamError, current.queue.items],
      noticeView,
    ),
    /** What the live region says when a reply finishes (changes once per finished reply). */
    finished: viewOf(
      (current) => [current.lastFinished],
      (current) => ({ seq: current.lastFinished?.seq ?? 0, text: finishedAnnouncement(current) }),
    ),
    /** The tab's title for the chat's own: "(2) title" while replies finished unseen (Q15). */
    titleOf: (title: string) => pageTitle(state.value, title),
    /** The "While you were away" divider goes above this reply (Q15). */
    awayDivider: computed(() => awayDividerBefore(state.value)),
    setDrainMode: away.setDrainMode,
    /** The chat's model and instructions (M2, M4). */
    setModel: chatSettings.setModel,
    setInstructions: chatSettings.setInstructions,
    send: streams.send,
    stop: streams.stop,
    retryNotice: streams.retryNotice,
    dismissNotice: () => store.dispatch({ type: 'notice.dismissed' }),
    queue,
    versionCommands: versions,
    feedback,
    /** The context meter (C2) and where the model's view starts (C3). */
    meter: viewOf(
      (current) => [current.context, current.compaction, current.queue.activeTurn],
      contextMeterView,
    ),
    contextMarker: viewOf(
      (current) => [current.context],
      (current) => current.context?.marker ?? null,
    ),
    compactNow: contextCommands.compactNow,
    /** The chat's tool settings panel (T1). */
    tools: viewOf(
      (current) => [current.tools, current.toolsWanted, current.queue.activeTurn],
      toolSettingsView,
    ),
    setToolMode: toolSettings.setMode,
    toolPanelOpened: toolSettings.panelOpened,
  };
}
