import {
  CHAT_EXPORT_FORMAT,
  CHAT_EXPORT_VERSION,
  type ChatExport,
  type ExportedDocument,
  type ExportedImage,
} from '@chat/contracts';
import type { ChatExportSource } from './exportReader';

const encoder = new TextEncoder();

/**
 * A chat as a JSON export (P1, format version 1), written as a stream: everything but the files'
 * bytes is small and goes first; then one image, then one document, at a time, read when the
 * client is ready for it, so a chat with many large files never sits in memory whole. `documents`
 * is written only when the chat has any (a chat without them exports as before documents).
 * `readBytes` answers undefined for a file deleted since the chat was read: the stream then fails
 * rather than write a file that could not be imported.
 */
export function chatExportStream(
  source: ChatExportSource,
  exportedAt: Date,
  readBytes: (attachmentId: string) => Promise<Uint8Array | undefined>,
): ReadableStream<Uint8Array> {
  const document: Omit<ChatExport, 'images'> = {
    format: CHAT_EXPORT_FORMAT,
    version: CHAT_EXPORT_VERSION,
    exportedAt: exportedAt.toISOString(),
    chat: { title: source.title, createdAt: source.createdAt.toISOString() },
    ...source.content,
  };
  // The files follow the rest, written below one by one: the object is left open for them.
  const opening = JSON.stringify(document);
  if (!opening.endsWith('}')) throw new Error('the export is not an object');
  const files = [
    ...source.images.map((file) => ({ list: 'images', ...file })),
    ...source.documents.map((file) => ({ list: 'documents', ...file })),
  ];
  let next = 0;
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      controller.enqueue(encoder.encode(`${opening.slice(0, -1)},"images":[`));
    },
    pull: async (controller) => {
      const file = files[next];
      if (!file) {
        controller.enqueue(encoder.encode(']}'));
        controller.close();
        return;
      }
      const previous = files[next - 1];
      const separator =
        file.list === 'images'
          ? previous
            ? ','
            : ''
          : previous?.list === 'documents'
            ? ','
            : '],"documents":[';
      const bytes = await readBytes(file.attachment.id);
      if (!bytes) throw new Error(`${file.list} ${file.key} is gone`);
      const entry = {
        id: file.key,
        name: file.attachment.name,
        mediaType: file.attachment.mediaType,
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      } as ExportedImage | ExportedDocument;
      controller.enqueue(encoder.encode(`${separator}${JSON.stringify(entry)}`));
      next += 1;
    },
  });
}
