import type { ChatUIMessage } from '~/utils/chatMessages';
import { refusalOf, type ThreadStore } from './useThreadStore';
import type { TurnStreams } from './useTurnStreams';

/**
 * Versions of the conversation (B1-B5): editing a user message into a new version (its reply
 * streams like a send), regenerating the latest reply, switching versions and deleting the latest
 * message (both answer the new thread detail, which replaces the transcript). When and why they
 * are locked is the state's (`versionsView`).
 */
export function useVersionCommands(store: ThreadStore, streams: TurnStreams) {
  const { base, dispatch } = store;

  function startEditing(messageId: string): void {
    dispatch({ type: 'messageEdit.started', messageId });
  }

  function cancelEditing(): void {
    dispatch({ type: 'messageEdit.ended' });
  }

  /**
   * Edits a user message into a new version (B1): the transcript becomes the messages before it,
   * the edited message, and the new reply as it streams. When the server refuses, the banner says
   * why and the transcript and the open editor stay as they were.
   */
  async function editMessage(messageId: string, text: string): Promise<void> {
    const messages = store.state.value.transcript.messages;
    const index = messages.findLastIndex((message) => message.id === messageId);
    if (index < 0) return;
    // Taken now: a read while the request is out may already show the new version.
    const keep = messages.slice(0, index);
    const path = `${base}/messages/${encodeURIComponent(messageId)}/versions`;
    await postVersion(path, { text }, text, keep, crypto.randomUUID());
  }

  /**
   * Regenerates the latest reply: the server makes a new version of the user message it answers,
   * with the same text, so the transcript becomes the messages before that message, the message
   * again, and the new reply as it streams. With `model`, that model writes it (M3); the chat
   * keeps its own.
   */
  async function regenerateReply(replyId: string, model?: string): Promise<void> {
    const messages = store.state.value.transcript.messages;
    const replyIndex = messages.findLastIndex((message) => message.id === replyId);
    const askedIndex = messages.slice(0, Math.max(replyIndex, 0)).findLastIndex((m) => m.role === 'user');
    const asked = messages[askedIndex];
    if (replyIndex < 0 || !asked) return;
    const path = `${base}/messages/${encodeURIComponent(replyId)}/regenerate`;
    const body = model ? { model } : {};
    await postVersion(path, body, textOfMessage(asked), messages.slice(0, askedIndex), crypto.randomUUID());
  }

  async function postVersion(
    path: string,
    body: Record<string, unknown>,
    text: string,
    keep: readonly ChatUIMessage[],
    clientRequestId: string,
  ): Promise<void> {
    dispatch({ type: 'versionChange.started' });
    await streams.start({
      kind: 'version',
      path,
      init: { method: 'POST', json: { ...body, clientRequestId } },
      userOf: () => ({ text, attachments: [] }),
      keep,
      retry: () => void postVersion(path, body, text, keep, clientRequestId),
    });
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
    dispatch({ type: 'versionChange.started' });
    try {
      await store.requestDetail(path, init);
    } catch (error) {
      // thread_busy, not_latest_turn, ...: nothing changed on the server, nothing changes here.
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
    } finally {
      dispatch({ type: 'versionChange.ended' });
    }
  }

  return { startEditing, cancelEditing, editMessage, regenerateReply, switchVersion, deleteMessage };
}
