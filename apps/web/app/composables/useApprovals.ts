import type { HitlDecision, HitlRequest, Note } from '@chat/contracts';
import type { InjectionKey } from 'vue';
import type { useLiveTurn } from './useLiveTurn';
import type { useThreadDetail } from './useThreadDetail';

/**
 * Tool approvals (H3) and the notes they wrote, as the server last told us: thread detail
 * and `hitl.changed` events bring the requests; Approve / Deny post the decision and stream
 * the reply that continues (the same turn) in this tab.
 */
export function useApprovals(
  threadId: string,
  options: {
    live: ReturnType<typeof useLiveTurn>;
    detail: ReturnType<typeof useThreadDetail>;
  },
) {
  const base = `/api/threads/${encodeURIComponent(threadId)}`;
  const requests = shallowRef<HitlRequest[]>([]);
  const notes = shallowRef<Note[]>([]);
  /** The request whose decision is on its way. */
  const deciding = ref<string | null>(null);

  const byToolCallId = computed(
    () => new Map(requests.value.map((request) => [request.toolCallId, request])),
  );

  function apply(next: HitlRequest[]): void {
    requests.value = next;
  }

  function applyNotes(next: Note[]): void {
    notes.value = next;
  }

  function requestFor(toolCallId: string): HitlRequest | undefined {
    return byToolCallId.value.get(toolCallId);
  }

  function toolCallIdsOf(turnId: string): string[] {
    return requests.value.filter((request) => request.turnId === turnId).map((request) => request.toolCallId);
  }

  /** Approve or deny; the answer is the continuing reply, shown as it streams. */
  async function decide(request: HitlRequest, decision: HitlDecision): Promise<void> {
    if (deciding.value) return;
    deciding.value = request.id;
    try {
      const start = await options.live.startTurnStream({
        path: `${base}/hitl/${encodeURIComponent(request.id)}`,
        init: { method: 'POST', json: { decision } },
        continues: true,
        textOf: () => '',
      });
      if (start.kind === 'refused') await options.detail.refresh();
      // Until the server's next word, show the decision the person made.
      else apply(requests.value.map((r) => (r.id === request.id ? { ...r, status: statusOf(decision) } : r)));
      if (start.kind === 'streaming') await start.ended;
    } finally {
      deciding.value = null;
    }
  }

  return {
    requests,
    notes,
    deciding: readonly(deciding),
    apply,
    applyNotes,
    requestFor,
    toolCallIdsOf,
    decide,
  };
}

function statusOf(decision: HitlDecision): HitlRequest['status'] {
  return decision === 'approve' ? 'approved' : 'denied';
}

export type Approvals = ReturnType<typeof useApprovals>;

/** Lets a tool card in the transcript find its request and decide it. */
export const approvalsKey: InjectionKey<Approvals> = Symbol('approvals');
