import type { FeedbackAnswer, FeedbackRating, MessageFeedback } from '@chat/contracts';
import { refusalOf, type ThreadStore } from './useThreadStore';

/**
 * Thumbs up / down with an optional comment on replies (H2). The choice shows at once; when the
 * server refuses it, the previous choice comes back and the banner says why. Other tabs follow
 * through the `feedback.changed` event.
 */
export function useFeedback(store: ThreadStore) {
  const { dispatch } = store;
  const pathOf = (messageId: string) => `${store.base}/messages/${encodeURIComponent(messageId)}/feedback`;

  function feedbackOf(messageId: string): MessageFeedback | null {
    const message = store.state.value.transcript.messages.findLast((candidate) => candidate.id === messageId);
    return message?.metadata?.feedback ?? null;
  }

  async function change(messageId: string, next: MessageFeedback | null): Promise<boolean> {
    const previous = feedbackOf(messageId);
    dispatch({ type: 'feedback.shown', messageId, feedback: next });
    try {
      if (next) {
        const answer = await apiJson<FeedbackAnswer>(pathOf(messageId), { method: 'PUT', json: next });
        dispatch({ type: 'feedback.shown', messageId, feedback: answer.feedback });
      } else {
        await apiFetch(pathOf(messageId), { method: 'DELETE' });
      }
      return true;
    } catch (error) {
      dispatch({ type: 'feedback.shown', messageId, feedback: previous });
      dispatch({ type: 'notice.shown', error: refusalOf(error) });
      return false;
    }
  }

  /** Sets a rating, keeping the comment only with the same rating; the same rating again clears it. */
  async function rate(messageId: string, rating: FeedbackRating): Promise<boolean> {
    const current = feedbackOf(messageId);
    if (current?.rating === rating) return await change(messageId, null);
    return await change(messageId, { rating });
  }

  /** Saves the comment that goes with the current rating (an empty one removes it). */
  async function comment(messageId: string, text: string): Promise<boolean> {
    const rating = feedbackOf(messageId)?.rating ?? 'down';
    const trimmed = text.trim();
    return await change(messageId, trimmed ? { rating, comment: trimmed } : { rating });
  }

  return { rate, comment };
}
