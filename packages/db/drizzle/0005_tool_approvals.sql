CREATE TABLE "hitl_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"turn_id" uuid NOT NULL,
	"tool_name" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"run_id" text NOT NULL,
	"args" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	CONSTRAINT "hitl_requests_status_check" CHECK ("hitl_requests"."status" in ('pending','approved','denied','cancelled'))
);
--> statement-breakpoint
CREATE TABLE "notes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"text" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chat_turn_requests" DROP CONSTRAINT "turns_status_check";--> statement-breakpoint
DROP INDEX "turns_one_active_per_thread_uq";--> statement-breakpoint
ALTER TABLE "hitl_requests" ADD CONSTRAINT "hitl_requests_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hitl_requests" ADD CONSTRAINT "hitl_requests_turn_id_chat_turn_requests_id_fk" FOREIGN KEY ("turn_id") REFERENCES "public"."chat_turn_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notes" ADD CONSTRAINT "notes_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hitl_requests_thread_idx" ON "hitl_requests" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "hitl_requests_one_pending_per_thread_uq" ON "hitl_requests" USING btree ("thread_id") WHERE "hitl_requests"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "notes_thread_idx" ON "notes" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "turns_one_active_per_thread_uq" ON "chat_turn_requests" USING btree ("thread_id") WHERE "chat_turn_requests"."status" in ('running', 'awaiting_approval');--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD CONSTRAINT "turns_status_check" CHECK ("chat_turn_requests"."status" in ('queued','running','awaiting_approval','completed','interrupted','failed','cancelled'));