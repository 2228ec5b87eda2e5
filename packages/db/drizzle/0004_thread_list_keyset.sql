DROP INDEX "threads_owner_updated_idx";--> statement-breakpoint
CREATE INDEX "threads_owner_updated_id_idx" ON "threads" USING btree ("owner_id","updated_at","id");