import {
  CHAT_EXPORT_FORMAT,
  CHAT_EXPORT_VERSION,
  type ChatExport,
  type ExportedImage,
} from '@chat/contracts';
import type { ChatExportSource } from './exportReader';

const encoder = new TextEncoder();

/**
 * A chat as a JSON export (P1, format version 1), written as a stream: everything but the images'
 * bytes is small and goes first; then one image at a time, read when the client is ready for it,
 * so a chat with many large images never sits in memory whole. `readBytes` answers undefined for
 * an image deleted since the chat was read: the stream then fails rather than write a file that
 * could not be imported.
 */
export function chatExportStream(
  source: ChatExportSource,
  exportedAt: Date,
  readBytes: (attachmentId: string) => Promise<Uint8Array | undefined>,
): ReadableStream<Uint8Array> {
  const document: ChatExport = {
    format: CHAT_EXPORT_FORMAT,
    version: CHAT_EXPORT_VERSION,
    exportedAt: exportedAt.toISOString(),
    chat: { title: source.title, createdAt: source.createdAt.toISOString() },
    ...source.content,
    // Last, so the images can follow the rest: written below, one by one.
    images: [],
  };
  const opening = JSON.stringify(document);
  const EMPTY_IMAGES = '"images":[]}';
  if (!opening.endsWith(EMPTY_IMAGES)) throw new Error('the export does not end with its images');
  let next = 0;
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      controller.enqueue(encoder.encode(opening.slice(0, -2)));
    },
    pull: async (controller) => {
      const image = source.images[next];
      if (!image) {
        controller.enqueue(encoder.encode(']}'));
        controller.close();
        return;
      }
      const bytes = await readBytes(image.attachment.id);
      if (!bytes) throw new Error(`image ${image.key} is gone`);
      const entry: ExportedImage = {
        id: image.key,
        name: image.attachment.name,
        mediaType: image.attachment.mediaType,
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      };
      controller.enqueue(encoder.encode(`${next > 0 ? ',' : ''}${JSON.stringify(entry)}`));
      next += 1;
    },
  });
}
