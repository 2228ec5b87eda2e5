import type { ThreadEvent, Turn } from '@chat/contracts';

/**
 * One open thread, for its page: the detail (`useThreadDetail`), the transcript
 * (`useTranscript`), its versions (`useVersions`), the queue (`useTurnQueue`), the live turn
 * (`useLiveTurn`), the error banner (`useThreadNotice`), and the thread events that keep this
 * tab in step with the server and with other tabs. Each group is a reactive object, so the
 * page reads `queue.items` or `live.isBusy` without `.value`.
 */
export function useThread(threadId: string) {
  const { refresh: refreshThreadList } = useThreads();
  let disposed = false;
  const isDisposed = () => disposed;

  const transcript = useTranscript(threadId);
  const queue = useTurnQueue(threadId);
  const notice = useThreadNotice(transcript, queue);
  const detail = useThreadDetail(threadId, {
    transcript,
    queue,
    isDisposed,
    afterFetch: () => live.reconcile(),
    onApply: (fetched) => {
      approvals.apply(fetched.hitl);
      approvals.applyNotes(fetched.notes);
    },
  });
  // Declared before the live turn, which claims the head only while this page is attached (Q10).
  const attached = ref(false);
  const live = useLiveTurn(threadId, {
    attached,
    transcript,
    queue,
    detail,
    notice,
    isDisposed,
    refreshThreadList,
    toolCallIdsOf: (turnId) => approvals.toolCallIdsOf(turnId),
    // Applying the settle reads no detail (whose end would reconcile), so reconcile here: the
    // head may run now, and a settle event that came while the stream was shown was not acted on.
    afterTurnStream: async (turnId) => {
      await settled.afterStream(turnId);
      live.reconcile();
    },
  });
  const settled = useSettledTurns({ transcript, detail, attached });
  const approvals = useApprovals(threadId, { live, detail });
  provide(approvalsKey, approvals);
  const versions = useVersions(threadId, { transcript, queue, detail, live, notice, refreshThreadList });
  const feedback = useFeedback(threadId, { transcript, notice });

  // --- the queue ------------------------------------------------------------------------

  /**
   * Saves a queued (or failed) turn's new text; the Dock's editor closes once it is saved. A
   * failed head becomes queued, and its failed attempt leaves the transcript (Q11).
   */
  async function saveQueuedEdit(turn: Turn, text: string): Promise<void> {
    try {
      await queue.edit(turn.id, text);
    } catch (error) {
      notice.show(error);
      return;
    }
    queue.editingTurnId.value = null;
    if (turn.status === 'failed') await detail.refresh();
    else live.reconcile();
  }

  /** Removes one image from a queued turn (the Dock's thumbnail); its text stays. */
  async function removeQueuedAttachment(turn: Turn, attachmentId: string): Promise<void> {
    const kept = turn.attachments.filter((attachment) => attachment.id !== attachmentId);
    try {
      await queue.edit(
        turn.id,
        turn.text,
        kept.map((attachment) => attachment.id),
      );
    } catch (error) {
      notice.show(error);
    }
  }

  /** Deletes a queued turn; a failed head's attempt leaves the transcript with it (Q11). */
  async function deleteQueued(turn: Turn): Promise<void> {
    try {
      await queue.remove(turn.id);
    } catch (error) {
      notice.show(error);
      return;
    }
    if (turn.status === 'failed') await detail.refresh();
    else live.reconcile();
  }

  /** Retry on a failed head (Q11): the same text runs again at once, in place of the attempt. */
  async function retryFailed(turn: Turn): Promise<void> {
    notice.dismiss();
    const start = await live.startTurnStream({
      path: `/api/threads/${encodeURIComponent(threadId)}/queue/${encodeURIComponent(turn.id)}/retry`,
      init: { method: 'POST' },
      textOf: () => turn.text,
      beforeShow: (turnId) => {
        queue.removeLocally(turnId);
        transcript.removeTurn(turnId);
      },
    });
    if (start.kind === 'streaming') await start.ended;
    else await detail.refresh();
  }

  /** Pause: nothing is claimed. Resume: the head runs now (this tab claims it). */
  async function setQueuePaused(paused: boolean): Promise<void> {
    try {
      await queue.setPaused(paused);
    } catch (error) {
      notice.show(error);
      return;
    }
    live.reconcile();
  }

  async function clearQueue(): Promise<void> {
    try {
      await queue.clear();
    } catch (error) {
      notice.show(error);
    }
    live.reconcile();
  }

  function startEditingQueued(turn: Turn): void {
    queue.editingTurnId.value = turn.id;
  }

  function cancelEditingQueued(): void {
    queue.editingTurnId.value = null;
    // The head waits while it is edited; it may run now.
    live.reconcile();
  }

  /** The reply waits for a person to approve or deny a tool call; sends queue meanwhile (Q12). */
  const waitingForApproval = computed(() => queue.activeTurn.value?.status === 'awaiting_approval');

  /**
   * What the Dock's head says about why it waits, in plain words (screen readers read the same
   * text). Null when it is about to run.
   */
  const headStatus = computed(() => {
    const head = queue.head.value;
    if (!head) return null;
    if (head.status === 'failed')
      return 'Blocked: this message failed. Retry, edit or delete it to continue.';
    // Q12: nothing runs while a tool call waits for the person's decision.
    if (waitingForApproval.value) return 'Waits for the approval in the reply above.';
    if (live.isBusy.value) return 'Runs after the current reply.';
    if (queue.paused.value) return 'Paused: resume the queue to run it.';
    if (!attached.value) return 'Waiting for this page to reconnect.';
    if (queue.editingTurnId.value === head.id) return 'Waits while you edit it.';
    return 'Starting…';
  });

  // --- the composer ---------------------------------------------------------------------

  /** Enter adds to the queue rather than starting a reply: one streams, or items wait. */
  const composerQueues = computed(() => live.isBusy.value || queue.items.value.length > 0);

  /** The composer takes no input while the thread loads, or while anything is being edited (Q8). */
  const composerDisabled = computed(
    () =>
      detail.loading.value ||
      detail.loadError.value !== null ||
      queue.editingTurnId.value !== null ||
      versions.editingMessageId.value !== null,
  );
  /** What the disabled composer says instead of its placeholder (the load error is said above it). */
  /** The composer's hint while the reply waits for an approval: new messages queue. */
  const composerWaitingFor = computed(() => (waitingForApproval.value ? 'an approval' : undefined));
  const composerDisabledReason = computed(() => {
    if (detail.loading.value) return 'Loading…';
    if (queue.editingTurnId.value) return 'Finish editing the queued message first';
    if (versions.editingMessageId.value) return 'Finish editing the message first';
    return undefined;
  });

  // --- keeping in step ------------------------------------------------------------------

  function onThreadEvent(event: ThreadEvent): void {
    if (event.threadId !== threadId) return;
    switch (event.type) {
      case 'queue.changed':
      case 'turn.started':
        queue.apply(event.turnQueue);
        break;
      case 'turn.settled':
        queue.apply(event.turnQueue);
        if (event.turn.status === 'interrupted') transcript.markInterrupted(event.turn.id);
        // Its final messages replace this tab's copy of the turn (or the detail is read).
        settled.onSettled(event);
        break;
      case 'hitl.changed':
        queue.apply(event.turnQueue);
        approvals.apply(event.hitl);
        // The transcript's tool card (another tab asked, or decided) and any new note.
        void detail.refresh();
        break;
      case 'thread.changed':
        void detail.refresh();
        void refreshThreadList();
        break;
      case 'feedback.changed':
        transcript.setFeedback(event.messageId, event.feedback);
        return;
      case 'thread.deleted':
        detail.deleted.value = true;
        void refreshThreadList();
        return;
    }
    live.reconcile();
  }

  const events = useThreadEvents(threadId, {
    onEvent: onThreadEvent,
    // After a reconnect, events may have been missed: catch up (not on the first connect,
    // which races the initial load).
    onConnected: () => {
      attached.value = true;
      if (!detail.loading.value) void detail.refresh();
    },
    onDisconnected: () => {
      attached.value = false;
    },
  });

  /** Subscribe first, then load, so no event between the two is lost. */
  async function open(): Promise<void> {
    events.open();
    await detail.load();
  }

  onScopeDispose(() => {
    disposed = true;
    void transcript.stop();
  });

  return {
    open,
    detail: reactive({
      thread: detail.thread,
      loading: detail.loading,
      loadError: detail.loadError,
      reconnecting: detail.reconnecting,
      deleted: detail.deleted,
    }),
    transcript: reactive({ messages: transcript.messages, status: transcript.status }),
    versions: reactive({ ...versions }),
    feedback: reactive({ ...feedback }),
    queue: reactive({
      activeTurn: queue.activeTurn,
      items: queue.items,
      capacity: queue.capacity,
      isFull: queue.isFull,
      paused: queue.paused,
      setPaused: setQueuePaused,
      clear: clearQueue,
      editingTurnId: queue.editingTurnId,
      startEditing: startEditingQueued,
      cancelEditing: cancelEditingQueued,
      saveEdit: saveQueuedEdit,
      remove: deleteQueued,
      removeAttachment: removeQueuedAttachment,
      retry: retryFailed,
      headStatus,
    }),
    live: reactive({ isBusy: live.isBusy, send: live.send, stop: live.stop, sendNow: live.sendNow }),
    approvals: reactive({ notes: approvals.notes }),
    composer: reactive({
      disabled: composerDisabled,
      disabledReason: composerDisabledReason,
      queues: composerQueues,
      waitingFor: composerWaitingFor,
    }),
    notice: reactive({ message: notice.message, retry: notice.retry, dismiss: notice.dismiss }),
  };
}
