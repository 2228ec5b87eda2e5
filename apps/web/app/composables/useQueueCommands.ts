import { type Attachment, mediaUrl, type Turn, type TurnQueue } from '@chat/contracts';
import { uploadAttachment } from './useAttachments';
import { refusalOf, type ThreadStore } from './useThreadStore';
import type { TurnStreams } from './useTurnStreams';

/** What an edit or delete of a queued turn answers. */
interface QueueAnswer {
  turn: Turn;
  turnQueue: TurnQueue;
}

/** A deleted item, as much of it as Undo needs to send it again. */
interface DeletedItem {
  text: string;
  images: { name: string; blob: Blob }[];
}

/**
 * The Dock's requests (Q8, Q11, S3): edit, delete (with an undo), remove an image, pause and
 * resume, clear. Every answer goes to the store as the queue the server now has.
 */
export function useQueueCommands(store: ThreadStore, streams: TurnStreams) {
  const { base, dispatch } = store;
  const itemPath = (turnId: string) => `${base}/queue/${encodeURIComponent(turnId)}`;

  async function request(path: string, init: ApiRequestInit): Promise<QueueAnswer | null> {
    try {
      const answer = await apiJson<QueueAnswer>(path, init);
      dispatch({ type: 'queue.answered', turnQueue: answer.turnQueue });
      return answer;
    } catch (error) {
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
      return null;
    }
  }

  function startEditing(turn: Turn): void {
    dispatch({ type: 'queueEdit.started', turnId: turn.id });
  }

  /** Closes the Dock's editor; the head waits while it is edited and may run now. */
  function cancelEditing(): void {
    dispatch({ type: 'queueEdit.ended' });
  }

  /**
   * Saves a queued (or failed) turn's new text; the editor closes once it is saved. A failed
   * head becomes queued, and its failed attempt leaves the transcript (Q11).
   */
  async function saveEdit(turn: Turn, text: string): Promise<void> {
    const answer = await request(itemPath(turn.id), { method: 'PATCH', json: { text } });
    if (!answer) return;
    dispatch({ type: 'queueEdit.ended' });
    if (turn.status === 'failed') dispatch({ type: 'queue.attemptRemoved' });
  }

  /** Removes one image from a queued turn (the Dock's thumbnail); its text stays. */
  async function removeAttachment(turn: Turn, attachmentId: string): Promise<void> {
    const kept = turn.attachments.filter((attachment) => attachment.id !== attachmentId);
    await request(itemPath(turn.id), {
      method: 'PATCH',
      json: { text: turn.text, attachmentIds: kept.map((attachment) => attachment.id) },
    });
  }

  /**
   * Deletes a queued turn (or a failed head with its attempt: "Remove and continue", Q11); the
   * queue goes on without it. Answers an undo, or null when the delete was refused. The server
   * deletes the images no other message carries, so they are read first, to send again on undo.
   */
  async function remove(turn: Turn): Promise<(() => Promise<void>) | null> {
    const deleted: DeletedItem = { text: turn.text, images: await readImages(turn.attachments) };
    const answer = await request(itemPath(turn.id), { method: 'DELETE' });
    if (!answer) return null;
    if (turn.status === 'failed') {
      dispatch({ type: 'queue.attemptRemoved' });
      // "Remove and continue" is a choice to go on, like Resume: it ends a pause (S3).
      if (store.state.value.queue.paused) await setPaused(false);
    }
    return () => undo(deleted);
  }

  /**
   * Undo of a delete: the text and its images are sent again as a new message. The API has no
   * way to put a message at a chosen place yet, so it joins the end of the queue (the same place
   * when it was the last; and when nothing waits or runs, it runs at once, like any send).
   */
  async function undo(deleted: DeletedItem): Promise<void> {
    let attachments: Attachment[];
    try {
      attachments = await Promise.all(
        deleted.images.map((image) => uploadAttachment(store.threadId, image.blob, image.name)),
      );
    } catch (error) {
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
      return;
    }
    await streams.send(deleted.text, { attachments });
  }

  /** Pause: nothing is claimed. Resume: the head runs (this tab claims it). */
  async function setPaused(paused: boolean): Promise<void> {
    try {
      const answer = await apiJson<{ turnQueue: TurnQueue }>(`${base}/queue/paused`, {
        method: 'PUT',
        json: { paused },
      });
      dispatch({ type: 'queue.answered', turnQueue: answer.turnQueue });
    } catch (error) {
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
    }
  }

  /** Deletes every queued (and failed) message, head first. */
  async function clear(): Promise<void> {
    for (const turn of store.state.value.queue.items.filter((item) => item.status !== 'steer_pending')) {
      try {
        const answer = await apiJson<QueueAnswer>(itemPath(turn.id), { method: 'DELETE' });
        dispatch({ type: 'queue.answered', turnQueue: answer.turnQueue });
      } catch (error) {
        // It left the queue meanwhile (it ran, or another tab deleted it): nothing to clear.
        if (error instanceof ApiRequestError && (error.code === 'not_queued' || error.status === 404))
          continue;
        dispatch({ type: 'notice.shown', error: refusalOf(error) });
        return;
      }
    }
  }

  return {
    startEditing,
    cancelEditing,
    saveEdit,
    removeAttachment,
    remove,
    setPaused,
    clear,
    retry: streams.retryFailed,
    sendNow: streams.sendNow,
  };
}

/** The bytes of a message's images (the Dock showed them, so they are usually in the cache). */
async function readImages(attachments: readonly Attachment[]): Promise<DeletedItem['images']> {
  const read = await Promise.allSettled(
    attachments.map(async (attachment) => {
      const response = await fetch(mediaUrl(attachment.id), { credentials: 'same-origin' });
      if (!response.ok) throw new Error(`image ${response.status}`);
      return { name: attachment.name, blob: await response.blob() };
    }),
  );
  return read.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}
