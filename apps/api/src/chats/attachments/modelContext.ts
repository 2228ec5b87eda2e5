import type { LanguageModelV4, LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { type Attachment, attachmentIdOfUrl, isDocumentMediaType } from '@chat/contracts';
import { wrapLanguageModel } from 'ai';
import { imageKind } from '../../platform/imageInfo';
import { budgetOfCall, type DocumentBudget, documentTexts, type ReadTextSlice } from './documentContext';

/** What a reference whose bytes are gone (deleted, a failed upload) reads as, to the model and in the page. */
export const IMAGE_NOT_AVAILABLE = '[image not available]';

export interface AttachmentContextOptions {
  /** How many of the most recent messages with images get their images' bytes (default 10). */
  window: number;
  describe(ids: readonly string[]): Promise<Map<string, Attachment>>;
  bytes(ids: readonly string[]): Promise<Map<string, Uint8Array>>;
  /** Reads part of a document's extracted text (D1); without it a document reads as not available. */
  readText?: ReadTextSlice;
  /** How much of documents' text a call holds. */
  documentBudget?: DocumentBudget;
  /**
   * Keeps how many pages or lines of each document of the newest user message the model read
   * (the turn of that message is running): the transcript's note of a cut. Kept once; a failure
   * to keep it never fails the call.
   */
  recordReads?(reads: ReadonlyArray<{ attachmentId: string; read: number }>): Promise<void>;
}

/** How a stored reference reaches the model call: it ends with the media route. */
const MEDIA_REFERENCE = /\/api\/media\/[0-9a-f-]{36}$/i;

type UserContent = (LanguageModelV4Message & { role: 'user' })['content'];
type UserPart = UserContent[number];

/**
 * The model's view of images: memory holds references (`/api/media/:id`), and just before each
 * model call the references of the last `window` messages with images are resolved into their
 * bytes; older ones become a short note naming them, and a reference whose bytes are gone becomes
 * `[image not available]`. Nothing here is stored: memory keeps the references.
 */
export function withAttachmentContext(
  model: LanguageModelV4,
  options: AttachmentContextOptions,
): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      // Our references are resolved here, never downloaded on the way (they are not URLs a
      // server could fetch): the model "supports" them.
      overrideSupportedUrls: async ({ model: inner }) => {
        const supported = await inner.supportedUrls;
        const withReference = (type: string) => [...(supported[type] ?? []), MEDIA_REFERENCE];
        return {
          ...supported,
          'image/*': withReference('image/*'),
          'application/*': withReference('application/*'),
          'text/*': withReference('text/*'),
        };
      },
      transformParams: async ({ params }) => ({
        ...params,
        prompt: await resolveImages(params.prompt, options),
      }),
    },
  });
}

/** The attachment a prompt part refers to (the stored URL arrives as the part's data). */
function referenceOf(part: UserPart): string | undefined {
  if (part.type !== 'file') return undefined;
  const { data } = part;
  if (data.type === 'data' && typeof data.data === 'string') return attachmentIdOfUrl(data.data);
  if (data.type === 'url') return attachmentIdOfUrl(data.url.pathname);
  return undefined;
}

/**
 * Resolves the prompt's references: images of the last `window` messages with images into their
 * bytes (older ones a note), documents into their text within the document budget
 * (`documentContext.ts`).
 */
export async function resolveImages(
  prompt: LanguageModelV4Prompt,
  options: AttachmentContextOptions,
): Promise<LanguageModelV4Prompt> {
  const referenced: Array<{ message: number; id: string; mediaType: string }> = [];
  for (const [index, message] of prompt.entries()) {
    if (message?.role !== 'user') continue;
    for (const part of message.content) {
      const id = referenceOf(part);
      if (id && part.type === 'file') referenced.push({ message: index, id, mediaType: part.mediaType });
    }
  }
  if (referenced.length === 0) return prompt;
  const described = await options.describe(referenced.map((reference) => reference.id));
  // A document by its description, or, once it is gone, by the type its reference names.
  const documents = referenced.filter(({ id, mediaType }) =>
    isDocumentMediaType(described.get(id)?.mediaType ?? mediaType),
  );
  const images = referenced.filter((reference) => !documents.includes(reference));
  // The window counts messages with images, newest first.
  const inWindow = new Set(
    [...new Set(images.map((image) => image.message))].sort((a, b) => b - a).slice(0, options.window),
  );
  const windowed = images.filter((image) => inWindow.has(image.message)).map((image) => image.id);
  const reads = new Map<string, { read: number; of: number }>();
  const [bytes, documentText] = await Promise.all([
    options.bytes(windowed),
    documentTexts(
      documents,
      described,
      options.readText ?? (async () => undefined),
      budgetOfCall(options.documentBudget ?? { perMessage: 0, perTurn: 0, countTokens: () => 1 }, prompt),
      reads,
    ),
  ]);
  await recordNewestReads(prompt, documents, reads, options);
  return prompt.map((message, index) => {
    if (message.role !== 'user') return message;
    const content = message.content.map((part): UserPart => {
      const id = referenceOf(part);
      if (!id || part.type !== 'file') return part;
      const attachment = described.get(id);
      const text = documentText.get(`${index}:${id}`);
      if (text !== undefined) return { type: 'text', text };
      const data = bytes.get(id);
      if (!attachment) return { type: 'text', text: IMAGE_NOT_AVAILABLE };
      if (!inWindow.has(index)) return { type: 'text', text: olderImageNote(attachment) };
      if (!data) return { type: 'text', text: IMAGE_NOT_AVAILABLE };
      return { ...part, mediaType: attachment.mediaType, data: { type: 'data', data } };
    });
    return { ...message, content };
  });
}

/** Keeps what the model read of the newest user message's documents (`recordReads`). */
async function recordNewestReads(
  prompt: LanguageModelV4Prompt,
  documents: ReadonlyArray<{ message: number; id: string }>,
  reads: ReadonlyMap<string, { read: number; of: number }>,
  options: AttachmentContextOptions,
): Promise<void> {
  const newest = prompt.findLastIndex((message) => message.role === 'user');
  const kept = documents.flatMap(({ message, id }) => {
    const read = message === newest ? reads.get(`${message}:${id}`) : undefined;
    return read ? [{ attachmentId: id, read: read.read }] : [];
  });
  if (kept.length === 0 || !options.recordReads) return;
  try {
    await options.recordReads(kept);
  } catch {
    // Only the person's note of a cut depends on it: the model call goes on without it.
  }
}

/** An image older than the window, as the model reads it: named, not shown. */
export function olderImageNote(attachment: Attachment): string {
  const kind = imageKind(attachment.mediaType);
  return `[earlier image, not shown: ${attachment.name} (${kind} ${attachment.width}x${attachment.height})]`;
}
