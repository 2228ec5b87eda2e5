import { z } from 'zod';

/**
 * Tool approvals (H3, Q12). The model asked to run a tool that writes; a person approves or
 * denies. `pending` blocks the thread's queue; the other statuses are terminal.
 */
export const hitlStatuses = ['pending', 'approved', 'denied', 'cancelled'] as const;
export type HitlStatus = (typeof hitlStatuses)[number];

export interface HitlRequest {
  id: string;
  turnId: string;
  toolName: string;
  /** The tool call's id in the transcript's tool part, so a client can put the card there. */
  toolCallId: string;
  /** The arguments the model gave, as JSON (show them as text, never as HTML). */
  args: unknown;
  status: HitlStatus;
  createdAt: string;
  decidedAt: string | null;
}

/** A note the `save_note` tool stored on the thread. */
export interface Note {
  id: string;
  text: string;
  createdAt: string;
}

/**
 * `POST /api/threads/:id/hitl/:requestId`. `allowForChat` (T1, approve only): approve this call
 * and allow the tool in this chat from now on, in one request ("Allow for this chat").
 */
export const decideHitlBody = z
  .object({ decision: z.enum(['approve', 'deny']), allowForChat: z.boolean().optional() })
  .refine((body) => !(body.allowForChat && body.decision === 'deny'), 'allowForChat goes with approve');
export type DecideHitlBody = z.infer<typeof decideHitlBody>;
export type HitlDecision = DecideHitlBody['decision'];
