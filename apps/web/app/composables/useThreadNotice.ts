import { errorMessage } from '@chat/contracts';
import type { useTranscript } from './useTranscript';
import type { useTurnQueue } from './useTurnQueue';

interface ThreadNotice {
  message: string;
  /** Sends the same request again (same clientRequestId, so never a second turn, Q1). */
  retry?: () => void;
}

/**
 * The thread page's error banner: a refusal or failure of this tab's last request, or else
 * the error a turn's stream ended with.
 */
export function useThreadNotice(
  transcript: ReturnType<typeof useTranscript>,
  queue: ReturnType<typeof useTurnQueue>,
) {
  const notice = ref<ThreadNotice | null>(null);

  const message = computed(() => {
    if (notice.value) return notice.value.message;
    const streamError = transcript.error.value;
    if (!streamError) return null;
    // A failed turn stays at the queue head with its error (Q11): the Dock already says it.
    const shownInDock = queue.items.value.some(
      (turn) => turn.id === transcript.failedTurnId.value && turn.status === 'failed',
    );
    return shownInDock ? null : streamError.message;
  });

  /** Shows why a request failed; `retry` is offered only when sending it again can help. */
  function show(error: unknown, retry?: () => void, prefix?: string): void {
    const apiError = ApiRequestError.fromUnknown(error);
    // The contract's words for a full queue say what to do about it.
    const words = apiError.code === 'queue_full' ? errorMessage('queue_full') : apiError.message;
    notice.value = {
      message: prefix ? `${prefix} ${words}` : words,
      retry: apiError.retryable ? retry : undefined,
    };
  }

  function dismiss(): void {
    notice.value = null;
    transcript.clearError();
  }

  return {
    message,
    retry: computed(() => notice.value?.retry),
    show,
    dismiss,
  };
}
