CREATE TABLE "rate_limit_windows" (
	"rule" text NOT NULL,
	"key" text NOT NULL,
	"count" integer NOT NULL,
	"resets_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rate_limit_windows_rule_key_pk" PRIMARY KEY("rule","key")
);
--> statement-breakpoint
CREATE INDEX "rate_limit_windows_resets_idx" ON "rate_limit_windows" USING btree ("resets_at");--> statement-breakpoint
-- Hand-written (below the generated part): the counts are worth nothing after a crash (a window
-- lasts a minute), so the table skips the write-ahead log and each counted request its flush.
ALTER TABLE "rate_limit_windows" SET UNLOGGED;
