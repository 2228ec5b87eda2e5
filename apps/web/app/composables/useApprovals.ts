import type { HitlDecision, HitlRequest } from '@chat/contracts';
import type { InjectionKey } from 'vue';
import { approvalsByToolCall } from '~/threadPage/views';
import type { ThreadStore } from './useThreadStore';
import type { TurnStreams } from './useTurnStreams';

/**
 * Tool approvals (H3) as a tool card in the transcript sees them: its request (from the state:
 * the thread detail and `hitl.changed` events bring them), whether a decision is on its way, and
 * Approve / Deny, which post the decision and stream the reply that continues (the same turn).
 */
export function useApprovals(store: ThreadStore, streams: TurnStreams) {
  const { base, dispatch } = store;
  const byToolCall = computed(() => approvalsByToolCall(store.state.value));
  const deciding = computed(() => store.state.value.deciding);

  function requestFor(toolCallId: string): HitlRequest | undefined {
    return byToolCall.value.get(toolCallId);
  }

  /**
   * Approve or deny; the answer is the continuing reply, shown as it streams. `allowForChat`
   * (approve only, T1): the chat allows this tool from now on, in the same request.
   */
  async function decide(
    request: HitlRequest,
    decision: HitlDecision,
    options: { allowForChat?: boolean } = {},
  ): Promise<void> {
    if (store.state.value.deciding) return;
    dispatch({ type: 'decision.started', requestId: request.id });
    try {
      const started = await streams.start({
        kind: 'decision',
        path: `${base}/hitl/${encodeURIComponent(request.id)}`,
        init: {
          method: 'POST',
          json: {
            decision,
            ...(options.allowForChat && decision === 'approve' ? { allowForChat: true } : {}),
          },
        },
        userOf: () => null,
      });
      if (started.kind === 'refused') return;
      dispatch({ type: 'decision.shown', requestId: request.id, status: statusOf(decision) });
      if (started.kind === 'streaming') await started.ended;
    } finally {
      dispatch({ type: 'decision.ended' });
    }
  }

  return { requestFor, deciding, decide };
}

function statusOf(decision: HitlDecision): HitlRequest['status'] {
  return decision === 'approve' ? 'approved' : 'denied';
}

export type Approvals = ReturnType<typeof useApprovals>;

/** Lets a tool card in the transcript find its request and decide it. */
export const approvalsKey: InjectionKey<Approvals> = Symbol('approvals');
