ALTER TABLE "chat_turn_requests" DROP CONSTRAINT "turns_status_check";--> statement-breakpoint
DROP INDEX "turns_one_active_per_thread_uq";--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD COLUMN "partial_parts" jsonb;--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD COLUMN "outcome" text;--> statement-breakpoint
CREATE UNIQUE INDEX "turns_one_active_per_thread_uq" ON "chat_turn_requests" USING btree ("thread_id") WHERE "chat_turn_requests"."status" in ('running', 'settling', 'awaiting_approval');--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD CONSTRAINT "turns_outcome_check" CHECK (("chat_turn_requests"."status" = 'settling') = ("chat_turn_requests"."outcome" is not null));--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD CONSTRAINT "turns_status_check" CHECK ("chat_turn_requests"."status" in ('queued','running','settling','awaiting_approval','completed','interrupted','failed','cancelled','steer_pending','delivered'));