import {
  type FeedbackBody,
  MAX_FEEDBACK_COMMENT_LENGTH,
  type MessageFeedback,
  refusalMessages,
} from '@chat/contracts';
import type { Database } from '@chat/db';
import { ApiError, notFound } from '../platform/errors';
import type { Signals } from '../platform/notifications';
import { deleteFeedback, upsertFeedback } from './feedback/repository';
import { roleOfThreadMessage } from './feedback/target';
import { requireOwnedThread } from './threads/repository';
import type { TranscriptStore } from './transcript/transcriptStore';

export interface FeedbackServiceDeps {
  db: Database;
  transcript: TranscriptStore;
  signals: Signals;
}

/**
 * Feedback on replies (H2): one rating (and optional comment) per person per assistant message of
 * their own thread, changeable and clearable. Thread detail shows it as `metadata.feedback`; every
 * open tab hears `feedback.changed`.
 */
export class FeedbackService {
  constructor(private readonly deps: FeedbackServiceDeps) {}

  async set(
    userId: string,
    threadId: string,
    messageId: string,
    body: FeedbackBody,
  ): Promise<MessageFeedback> {
    await this.requireReply(userId, threadId, messageId);
    const comment = body.comment?.trim() ?? '';
    // Code points, as a person counts characters (an emoji is one, not two UTF-16 units).
    if ([...comment].length > MAX_FEEDBACK_COMMENT_LENGTH) {
      throw new ApiError('too_large', refusalMessages.too_large.comment);
    }
    const key = { userId, threadId, messageId };
    const feedback = await upsertFeedback(this.deps.db, key, {
      rating: body.rating,
      comment: comment || null,
    });
    await this.deps.signals.publish({ kind: 'feedback.changed', threadId, messageId });
    return feedback;
  }

  async clear(userId: string, threadId: string, messageId: string): Promise<void> {
    await this.requireReply(userId, threadId, messageId);
    await deleteFeedback(this.deps.db, { userId, threadId, messageId });
    await this.deps.signals.publish({ kind: 'feedback.changed', threadId, messageId });
  }

  /** The caller's thread (else 404) must hold the message (else 404), and it must be a reply (else 400). */
  private async requireReply(userId: string, threadId: string, messageId: string): Promise<void> {
    await requireOwnedThread(this.deps.db, threadId, userId);
    const role = await roleOfThreadMessage(this.deps.db, this.deps.transcript, threadId, messageId);
    if (!role) throw notFound('message');
    if (role !== 'assistant')
      throw new ApiError('bad_request', refusalMessages.bad_request.feedbackOnReplies);
  }
}
