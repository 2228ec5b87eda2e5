import { threadBusyMessages } from '@chat/contracts';
import type { ChatUIMessage } from '~/utils/chatMessages';
import type { useLiveTurn } from './useLiveTurn';
import type { useThreadDetail } from './useThreadDetail';
import type { useThreadNotice } from './useThreadNotice';
import type { useTranscript } from './useTranscript';
import type { useTurnQueue } from './useTurnQueue';

export interface VersionsOptions {
  transcript: ReturnType<typeof useTranscript>;
  queue: ReturnType<typeof useTurnQueue>;
  detail: ReturnType<typeof useThreadDetail>;
  live: ReturnType<typeof useLiveTurn>;
  notice: ReturnType<typeof useThreadNotice>;
  refreshThreadList: () => Promise<void>;
}

/**
 * Versions of the conversation (B1-B5): editing a user message into a new version (its reply
 * streams like a send), switching versions and deleting the latest message (both answer the
 * new thread detail, which replaces the transcript). The server refuses all three while a
 * turn runs, and an edit also while items wait in the queue (thread_busy): queued items run on
 * the version shown when they are claimed, but an edit's reply would overtake them. The
 * controls wait for the same, and say why.
 */
export function useVersions(threadId: string, options: VersionsOptions) {
  const { transcript, queue, detail, live, notice } = options;
  const base = `/api/threads/${encodeURIComponent(threadId)}`;

  /** The user message open in the inline editor (one at a time). */
  const editingMessageId = ref<string | null>(null);
  // Version changes (edit, switch, delete) waiting for their answer.
  const changesInFlight = ref(0);

  /** An edit, switch or delete is waiting for the server's answer. */
  const changing = computed(() => changesInFlight.value > 0);
  /**
   * Why the shown version cannot change right now (switch, delete), or null: said before the
   * server would refuse with thread_busy, in the words it would use.
   */
  const lockedReason = computed(() => {
    if (changing.value) return 'Changing versions…';
    if (live.isBusy.value) return threadBusyMessages.turn_running;
    return null;
  });
  /** Why a message cannot be edited into a new version right now, or null. */
  const editLockedReason = computed(() => {
    if (lockedReason.value) return lockedReason.value;
    if (queue.items.value.length > 0) return threadBusyMessages.queue_waiting;
    return null;
  });

  /**
   * Edits a user message into a new version (B1): the transcript becomes the messages before
   * it, the edited message, and the new reply as it streams. When the server refuses, the
   * banner says why and the transcript and the open editor are left as they were.
   */
  async function editMessage(messageId: string, text: string): Promise<void> {
    const index = transcript.messages.value.findIndex((message) => message.id === messageId);
    if (index < 0) return;
    // Taken now: a refetch while the request is out may already show the new version.
    const before = transcript.messages.value.slice(0, index);
    const path = `${base}/messages/${encodeURIComponent(messageId)}/versions`;
    await postVersion(path, { text }, text, before, crypto.randomUUID());
  }

  /**
   * Regenerates the latest reply: the server makes a new version of the user message it answers,
   * with the same text, so the transcript becomes the messages before that message, the message
   * again, and the new reply as it streams; `‹ k / n ›` then shows on the user message.
   */
  async function regenerateReply(replyId: string): Promise<void> {
    const messages = transcript.messages.value;
    const replyIndex = messages.findIndex((message) => message.id === replyId);
    const askedIndex = messages.slice(0, Math.max(replyIndex, 0)).findLastIndex((m) => m.role === 'user');
    const asked = messages[askedIndex];
    if (replyIndex < 0 || !asked) return;
    const path = `${base}/messages/${encodeURIComponent(replyId)}/regenerate`;
    await postVersion(path, {}, textOfMessage(asked), messages.slice(0, askedIndex), crypto.randomUUID());
  }

  async function postVersion(
    path: string,
    body: Record<string, unknown>,
    text: string,
    before: ChatUIMessage[],
    clientRequestId: string,
  ): Promise<void> {
    notice.dismiss();
    changesInFlight.value++;
    const start = await live.startTurnStream({
      path,
      init: { method: 'POST', json: { ...body, clientRequestId } },
      textOf: () => text,
      // Cut and start streaming in one go, so no refetch lands in between (a refetch skips the
      // transcript while a stream runs; the stream's end refetches the new version's ids).
      beforeShow: () => {
        changesInFlight.value--;
        editingMessageId.value = null;
        transcript.setMessages(before);
      },
      // A retry whose turn no longer streams here (202 `{ turn, turnQueue }`): the refetch below
      // shows how it ended.
      onQueued: (response) => void response.body?.cancel(),
      retry: () => void postVersion(path, body, text, before, clientRequestId),
    });
    if (start.kind === 'streaming') {
      void options.refreshThreadList();
      return;
    }
    changesInFlight.value--;
    if (start.kind === 'refused') {
      live.reconcile();
      return;
    }
    editingMessageId.value = null;
    await detail.refresh();
  }

  /** Shows version `branchId` (B2); the server stores the choice, so a reload shows it too (B5). */
  function switchVersion(branchId: string): Promise<void> {
    return changeVersions(`${base}/active-branch`, { method: 'PUT', json: { branchId } });
  }

  /** Deletes the latest user message of this version and its reply (B4). */
  function deleteMessage(messageId: string): Promise<void> {
    return changeVersions(`${base}/messages/${encodeURIComponent(messageId)}`, { method: 'DELETE' });
  }

  /** A switch or delete: the server answers the new thread detail, which is shown as is. */
  async function changeVersions(path: string, init: ApiRequestInit): Promise<void> {
    notice.dismiss();
    changesInFlight.value++;
    try {
      await detail.request(path, init);
    } catch (error) {
      // thread_busy, not_latest_turn, ...: nothing changed on the server, nothing changes here.
      notice.show(error);
    } finally {
      changesInFlight.value--;
    }
    live.reconcile();
  }

  function startEditingMessage(messageId: string): void {
    editingMessageId.value = messageId;
  }

  function cancelEditingMessage(): void {
    editingMessageId.value = null;
  }

  // The message being edited left the transcript (another tab switched versions, say).
  watch(transcript.messages, (messages) => {
    const editing = editingMessageId.value;
    if (editing && !messages.some((message) => message.id === editing)) editingMessageId.value = null;
  });

  return {
    editingMessageId: readonly(editingMessageId),
    changing,
    lockedReason,
    editLockedReason,
    startEditingMessage,
    cancelEditingMessage,
    editMessage,
    regenerateReply,
    switchVersion,
    deleteMessage,
  };
}
