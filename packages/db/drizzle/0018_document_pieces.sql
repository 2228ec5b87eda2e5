ALTER TABLE "attachment_texts" ADD COLUMN "pieces" integer;--> statement-breakpoint
ALTER TABLE "attachment_texts" ADD COLUMN "read_pieces" integer;--> statement-breakpoint
-- Hand-written, below the generated part: count the pieces of the texts stored before this column
-- (a PDF's pages apart by form feeds, any other text's lines), as the API counts them on upload.
UPDATE "attachment_texts" t SET "pieces" = length(t."text") - length(replace(t."text", CASE WHEN a."media_type" = 'application/pdf' THEN E'\f' ELSE E'\n' END, '')) + 1 FROM "attachments" a WHERE a."id" = t."attachment_id";
