ALTER TABLE "threads" ADD COLUMN "drain_mode" text DEFAULT 'viewer' NOT NULL;--> statement-breakpoint
CREATE INDEX "turns_queued_thread_idx" ON "chat_turn_requests" USING btree ("thread_id") WHERE "chat_turn_requests"."status" = 'queued';--> statement-breakpoint
ALTER TABLE "threads" ADD CONSTRAINT "threads_drain_mode_check" CHECK ("threads"."drain_mode" in ('viewer','background'));