ALTER TABLE "threads" ADD COLUMN "workspace_id" text;--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "workspace_path" text;