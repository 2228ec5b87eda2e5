ALTER TABLE "chat_turn_requests" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "queue_paused" boolean DEFAULT false NOT NULL;