ALTER TABLE "chat_turn_requests" DROP CONSTRAINT "turns_status_check";--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD COLUMN "steer" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD COLUMN "resume_token" text;--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD CONSTRAINT "turns_status_check" CHECK ("chat_turn_requests"."status" in ('queued','running','awaiting_approval','completed','interrupted','failed','cancelled','steer_pending','delivered'));