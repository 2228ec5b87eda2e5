CREATE TABLE "attachment_texts" (
	"attachment_id" uuid PRIMARY KEY NOT NULL,
	"text" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "pages" integer;--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "words" integer;--> statement-breakpoint
ALTER TABLE "attachment_texts" ADD CONSTRAINT "attachment_texts_attachment_id_attachments_id_fk" FOREIGN KEY ("attachment_id") REFERENCES "public"."attachments"("id") ON DELETE cascade ON UPDATE no action;