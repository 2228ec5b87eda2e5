import type { Turn, TurnQueue } from '@chat/contracts';
import { QUEUE_CAPACITY } from '@chat/contracts';

/** What an edit or delete of a queued turn answers. */
interface QueueAnswer {
  turn: Turn;
  turnQueue: TurnQueue;
}

/**
 * The thread's queue as the server last told us (Q6): the active turn and the queued
 * (or failed, blocking) turns in run order, plus the Dock's edit/delete actions. The
 * server is the only source of truth; local changes are only made to show an answer
 * a moment before the matching `queue.changed` event arrives.
 */
export function useTurnQueue(threadId: string) {
  const base = `/api/threads/${encodeURIComponent(threadId)}`;
  const turnQueue = shallowRef<TurnQueue>({ activeTurn: null, items: [], paused: false });
  /** The queued turn whose text is being edited in the Dock (the composer is disabled meanwhile, Q8). */
  const editingTurnId = ref<string | null>(null);

  const activeTurn = computed(() => turnQueue.value.activeTurn);
  const items = computed(() => turnQueue.value.items);
  const head = computed<Turn | null>(() => items.value[0] ?? null);
  const isFull = computed(() => items.value.length >= QUEUE_CAPACITY);
  /** Paused by the owner (in any tab): nothing is claimed until it is resumed. */
  const paused = computed(() => turnQueue.value.paused);

  // Counts changes, so a thread detail fetched before a newer change cannot undo it.
  let version = 0;

  function apply(next: TurnQueue): void {
    version++;
    turnQueue.value = next;
    if (editingTurnId.value && !next.items.some((turn) => turn.id === editingTurnId.value)) {
      // The item left the queue (ran, or was deleted in another tab) while being edited.
      editingTurnId.value = null;
    }
  }

  /**
   * The queue from a thread detail fetched when `versionAtRequest` was current. If events
   * arrived meanwhile, they are at least as new as the detail (and anything newer than them
   * is on its way as another event), so the detail's copy is dropped.
   */
  function applyFetched(next: TurnQueue, versionAtRequest: number): void {
    if (versionAtRequest === version) apply(next);
  }

  function currentVersion(): number {
    return version;
  }

  function removeLocally(turnId: string): void {
    apply({ ...turnQueue.value, items: turnQueue.value.items.filter((turn) => turn.id !== turnId) });
  }

  /**
   * Saves new text for a queued or failed turn; a failed one becomes queued again (Q11).
   * `attachmentIds`: the images it carries from now on (left out: it keeps its own).
   */
  async function edit(turnId: string, text: string, attachmentIds?: readonly string[]): Promise<void> {
    const answer = await apiJson<QueueAnswer>(`${base}/queue/${encodeURIComponent(turnId)}`, {
      method: 'PATCH',
      json: attachmentIds ? { text, attachmentIds } : { text },
    });
    apply(answer.turnQueue);
  }

  async function remove(turnId: string): Promise<void> {
    const answer = await apiJson<QueueAnswer>(`${base}/queue/${encodeURIComponent(turnId)}`, {
      method: 'DELETE',
    });
    apply(answer.turnQueue);
    if (editingTurnId.value === turnId) editingTurnId.value = null;
  }

  /** Pauses or resumes the queue (server state: every tab and the claim rule follow it). */
  async function setPaused(value: boolean): Promise<void> {
    const answer = await apiJson<{ turnQueue: TurnQueue }>(`${base}/queue/paused`, {
      method: 'PUT',
      json: { paused: value },
    });
    apply(answer.turnQueue);
  }

  /** Deletes every queued (and failed) message, head first. */
  async function clear(): Promise<void> {
    for (const turn of items.value.filter((item) => item.status !== 'steer_pending')) {
      try {
        await remove(turn.id);
      } catch (error) {
        // It left the queue meanwhile (it ran, or another tab deleted it): nothing to clear.
        if (!(error instanceof ApiRequestError && (error.code === 'not_queued' || error.status === 404)))
          throw error;
      }
    }
  }

  return {
    activeTurn,
    paused,
    setPaused,
    clear,
    items,
    head,
    isFull,
    capacity: QUEUE_CAPACITY,
    editingTurnId,
    apply,
    applyFetched,
    currentVersion,
    removeLocally,
    edit,
    remove,
  };
}
