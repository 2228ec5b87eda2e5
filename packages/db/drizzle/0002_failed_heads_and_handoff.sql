ALTER TABLE "chat_turn_requests" ADD COLUMN "removed_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "turns_branch_settled_seq_idx" ON "chat_turn_requests" USING btree ("branch_id","seq") WHERE "chat_turn_requests"."status" in ('completed', 'interrupted') and "chat_turn_requests"."removed_at" is null;--> statement-breakpoint
-- Before this migration a turn that failed after some reply text left the queue as `failed`. A
-- failed turn now always waits at the queue head (Q11), so those earlier rows would suddenly block
-- their queues: they become `interrupted`, which is what they were to the person (a cut-off reply).
UPDATE "chat_turn_requests" SET "status" = 'interrupted' WHERE "status" = 'failed' AND "partial_text" <> '';
