import {
  type Attachment,
  mediaUrl,
  type QueueItemAnswer,
  type QueuePlace,
  refusalMessages,
  type Turn,
  type TurnQueue,
} from '@chat/contracts';
import { shownQueueItems } from '~/threadPage/queue';
import { placeBack } from '~/threadPage/queueOrder';
import type { Refusal } from '~/threadPage/state';
import { shownOrder } from '~/threadPage/views';
import { uploadAttachment } from './useAttachments';
import { refusalOf, type ThreadStore } from './useThreadStore';
import type { TurnStreams } from './useTurnStreams';

/** A deleted item, as much of it as Undo needs to send it again and put it back in its place. */
interface DeletedItem {
  turnId: string;
  text: string;
  images: { name: string; blob: Blob }[];
  /** The Dock's order (ids) before the delete. */
  order: string[];
  /**
   * The queue was paused. Deleting its last item ends the pause (the server's rule, S3): Undo
   * pauses it again before sending, so the message comes back to wait, not to run.
   */
  paused: boolean;
}

/** Undoes what a command did (a toast offers it for a few seconds). */
export type Undo = () => Promise<void>;

/**
 * The Dock's requests (Q8, Q11, Q13, Q14, S3): edit, delete, move, merge, pause and resume,
 * clear, and the undo of a delete, a move or a merge. Every answer goes to the store as the queue
 * the server now has; what the page shows meanwhile is the state's call.
 */
export function useQueueCommands(store: ThreadStore, streams: TurnStreams) {
  const { base, dispatch } = store;
  const itemPath = (turnId: string) => `${base}/queue/${encodeURIComponent(turnId)}`;

  async function request(path: string, init: ApiRequestInit): Promise<QueueItemAnswer | null> {
    try {
      const answer = await apiJson<QueueItemAnswer>(path, init);
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
  async function remove(turn: Turn): Promise<Undo | null> {
    const deleted: DeletedItem = {
      turnId: turn.id,
      text: turn.text,
      images: await readImages(turn.attachments),
      order: shownOrder(store.state.value),
      paused: store.state.value.queue.paused,
    };
    const answer = await request(itemPath(turn.id), { method: 'DELETE' });
    if (!answer) return null;
    if (turn.status === 'failed') {
      dispatch({ type: 'queue.attemptRemoved' });
      // "Remove and continue" is a choice to go on, like Resume: it ends a pause (S3).
      if (store.state.value.queue.paused) await setPaused(false);
    }
    return () => undoDelete(deleted);
  }

  /**
   * Undo of a delete: the text and its images are sent again as a new message, which joins the end
   * of the queue and is then moved back to where the deleted one was (Q13). When nothing waits
   * or runs it runs at once, like any send, unless the delete ended a pause: that comes back
   * first. A failed attempt is not brought back: its text waits again, first among the items that
   * may move.
   */
  async function undoDelete(deleted: DeletedItem): Promise<void> {
    let attachments: Attachment[];
    try {
      attachments = await Promise.all(
        deleted.images.map((image) => uploadAttachment(store.threadId, image.blob, image.name)),
      );
    } catch (error) {
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
      return;
    }
    if (deleted.paused && !store.state.value.queue.paused) await setPaused(true);
    const sentAgain = await sendAgain(deleted.text, attachments);
    if (sentAgain.waitingId) await moveBack(deleted.order, deleted.turnId, sentAgain.waitingId);
  }

  /**
   * Sends a message again (an undo). Answers whether the server took it and, when it waits in the
   * queue, its new turn's id. `clientRequestId`: the same one on a retry, so nothing is sent twice;
   * `retry`: what the banner's Retry does when it was not taken.
   */
  async function sendAgain(
    text: string,
    attachments: readonly Attachment[],
    options: { clientRequestId?: string; retry?: () => void } = {},
  ): Promise<{ accepted: boolean; waitingId: string | null }> {
    const { clientRequestId = crypto.randomUUID(), retry } = options;
    const outcome = await streams.send(text, { clientRequestId, attachments, ...(retry ? { retry } : {}) });
    if (outcome !== 'accepted') return { accepted: false, waitingId: null };
    const waiting = store.state.value.queue.items.find((item) => item.clientRequestId === clientRequestId);
    return { accepted: true, waitingId: waiting?.id ?? null };
  }

  // Moves go out one at a time, so the server applies them in the order the Dock showed them.
  let previousMove: Promise<unknown> = Promise.resolve();

  /**
   * Moves an item (drag, Alt+Up/Down, Run next): the Dock shows it at once, the server stores it,
   * every tab follows (Q13). Answers the undo (back to where it was), or null when refused.
   */
  function move(turnId: string, place: QueuePlace): Promise<Undo | null> {
    const order = shownOrder(store.state.value);
    dispatch({ type: 'queueMove.requested', move: { turnId, place } });
    const sent = previousMove.then(async (): Promise<Undo | null> => {
      try {
        const answer = await apiJson<QueueItemAnswer>(`${itemPath(turnId)}/move`, {
          method: 'POST',
          json: place,
        });
        dispatch({ type: 'queueMove.answered', turnQueue: answer.turnQueue });
        return () => moveBack(order, turnId, turnId);
      } catch (error) {
        dispatch({ type: 'queueMove.refused', error: refusalOf(error) });
        return null;
      }
    });
    previousMove = sent;
    return sent;
  }

  /** Puts `turnId` back where `originalId` was in `order` (an undo); nothing when it is already there. */
  async function moveBack(order: readonly string[], originalId: string, turnId: string): Promise<void> {
    const items = shownQueueItems(store.state.value);
    if (!items.some((item) => item.id === turnId)) {
      dispatch({ type: 'notice.shown', error: undoTooLate });
      return;
    }
    const place = placeBack(
      order.map((id) => (id === originalId ? turnId : id)),
      turnId,
      items,
    );
    if (place) await move(turnId, place);
  }

  /** Starts picking items to merge, with `turn` picked (Q14). */
  function startPicking(turn: Turn): void {
    dispatch({ type: 'queueSelection.started', turnId: turn.id });
  }

  function togglePick(turn: Turn): void {
    dispatch({ type: 'queueSelection.toggled', turnId: turn.id });
  }

  function endPicking(): void {
    dispatch({ type: 'queueSelection.ended' });
  }

  /**
   * Merges the picked items into one message at the place of the first (Q14). Answers the undo,
   * or null when nothing was merged (the refusal is on the banner).
   */
  async function merge(): Promise<Undo | null> {
    const state = store.state.value;
    const picked = shownQueueItems(state).filter((item) => state.selection?.includes(item.id));
    if (picked.length < 2 || state.merging) return null;
    const order = shownOrder(state);
    dispatch({ type: 'queueMerge.requested' });
    try {
      const answer = await apiJson<QueueItemAnswer>(`${base}/queue/merge`, {
        method: 'POST',
        json: { clientRequestId: crypto.randomUUID(), turnIds: picked.map((item) => item.id) },
      });
      dispatch({ type: 'queueMerge.answered', turnQueue: answer.turnQueue });
      return () => unmerge(answer.turn, picked, order);
    } catch (error) {
      dispatch({ type: 'queueMerge.refused', error: refusalOf(error) });
      return null;
    }
  }

  /**
   * Undo of a merge, from the contract's own requests: the items after the first are sent again
   * (the merged item still carries their images, so they are not lost), the merged item gets the
   * first one's text and images back, and the ones sent again go back to their places. The queue
   * holds as many as before the merge, so none of them is refused for a full queue. Once the
   * merged message has started, there is nothing to undo: the banner says so.
   * When one cannot be sent again, the undo stops there and the merged item keeps every text; the
   * banner's Retry goes on with the same requests (`clientRequestIds`), so none is sent twice.
   */
  async function unmerge(
    merged: Turn,
    originals: readonly Turn[],
    order: readonly string[],
    clientRequestIds: readonly string[] = originals.slice(1).map(() => crypto.randomUUID()),
  ): Promise<void> {
    if (!store.state.value.queue.items.some((item) => item.id === merged.id)) {
      dispatch({ type: 'notice.shown', error: undoTooLate });
      return;
    }
    const [first, ...rest] = originals as [Turn, ...Turn[]];
    const sentAgain: [original: Turn, id: string][] = [];
    for (const [index, original] of rest.entries()) {
      const again = await sendAgain(original.text, original.attachments, {
        clientRequestId: clientRequestIds[index],
        retry: () => void unmerge(merged, originals, order, clientRequestIds),
      });
      if (!again.accepted) return;
      if (again.waitingId) sentAgain.push([original, again.waitingId]);
    }
    const restored = await request(itemPath(merged.id), {
      method: 'PATCH',
      json: { text: first.text, attachmentIds: first.attachments.map((image) => image.id) },
    });
    if (!restored) return;
    // The merged item stands for the first again; each one sent again goes back after what was before it.
    let current = order.map((id) => (id === first.id ? merged.id : id));
    for (const [original, id] of sentAgain) {
      current = current.map((known) => (known === original.id ? id : known));
      await moveBack(current, id, id);
    }
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
        const answer = await apiJson<QueueItemAnswer>(itemPath(turn.id), { method: 'DELETE' });
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
    move,
    startPicking,
    togglePick,
    endPicking,
    merge,
    setPaused,
    clear,
    retry: streams.retryFailed,
    sendNow: (turn: Turn) => streams.sendNow(turn),
    /** "Stop & send this": moves the item to the head and runs it, in one request (Q9). */
    stopAndSend: (turn: Turn) => streams.sendNow(turn, { moveToHead: true }),
  };
}

/** An undo that came too late: the message it would change has left the queue (it runs, or ran). */
const undoTooLate: Refusal = {
  message: refusalMessages.not_queued.undoTooLate,
  status: 409,
  code: 'not_queued',
  retryable: false,
};

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
