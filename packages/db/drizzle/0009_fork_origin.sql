ALTER TABLE "threads" ADD COLUMN "forked_from_thread_id" uuid;--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "forked_from_message_id" text;--> statement-breakpoint
ALTER TABLE "threads" ADD CONSTRAINT "threads_forked_from_thread_id_threads_id_fk" FOREIGN KEY ("forked_from_thread_id") REFERENCES "public"."threads"("id") ON DELETE set null ON UPDATE no action;