import { z } from 'zod';

export const feedbackRatings = ['up', 'down'] as const;
export type FeedbackRating = (typeof feedbackRatings)[number];

/** A person's feedback on one assistant message (H2), as thread detail carries it in metadata. */
export interface MessageFeedback {
  rating: FeedbackRating;
  comment?: string;
}

/**
 * `PUT /api/threads/:id/messages/:messageId/feedback`. The comment's length is checked by the API
 * (after trimming, in code points), so an over-long one is `413 too_large`, not `400`.
 */
export const feedbackBody = z.object({
  rating: z.enum(feedbackRatings),
  comment: z.string().optional(),
});
export type FeedbackBody = z.infer<typeof feedbackBody>;

/** The answer to a feedback `PUT`. */
export interface FeedbackAnswer {
  messageId: string;
  feedback: MessageFeedback;
}
