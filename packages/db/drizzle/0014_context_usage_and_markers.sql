CREATE TABLE "context_markers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"branch_id" uuid NOT NULL,
	"previous_id" uuid,
	"kind" text NOT NULL,
	"summary" text,
	"summary_tokens" integer DEFAULT 0 NOT NULL,
	"error" text,
	"first_message_id" text NOT NULL,
	"first_message_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "context_markers_branch_previous_uq" UNIQUE NULLS NOT DISTINCT("branch_id","previous_id"),
	CONSTRAINT "context_markers_kind_check" CHECK ("context_markers"."kind" in ('summary', 'cut'))
);
--> statement-breakpoint
CREATE TABLE "message_token_counts" (
	"thread_id" uuid NOT NULL,
	"message_id" text NOT NULL,
	"encoding" text NOT NULL,
	"tokens" integer NOT NULL,
	CONSTRAINT "message_token_counts_thread_id_message_id_encoding_pk" PRIMARY KEY("thread_id","message_id","encoding")
);
--> statement-breakpoint
ALTER TABLE "chat_turn_requests" ADD COLUMN "usage" jsonb;--> statement-breakpoint
ALTER TABLE "context_markers" ADD CONSTRAINT "context_markers_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "context_markers" ADD CONSTRAINT "context_markers_branch_id_branches_id_fk" FOREIGN KEY ("branch_id") REFERENCES "public"."branches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_token_counts" ADD CONSTRAINT "message_token_counts_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "context_markers_branch_created_idx" ON "context_markers" USING btree ("branch_id","created_at");