import type { LanguageModelV4, LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { type Attachment, attachmentIdOfUrl } from '@chat/contracts';
import { wrapLanguageModel } from 'ai';
import { imageKind } from '../../platform/imageInfo';

/** What a reference whose bytes are gone (deleted, a failed upload) reads as, to the model and in the page. */
export const IMAGE_NOT_AVAILABLE = '[image not available]';

export interface AttachmentContextOptions {
  /** How many of the most recent messages with images get their images' bytes (default 10). */
  window: number;
  describe(ids: readonly string[]): Promise<Map<string, Attachment>>;
  bytes(ids: readonly string[]): Promise<Map<string, Uint8Array>>;
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
        return { ...supported, 'image/*': [...(supported['image/*'] ?? []), MEDIA_REFERENCE] };
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

export async function resolveImages(
  prompt: LanguageModelV4Prompt,
  options: AttachmentContextOptions,
): Promise<LanguageModelV4Prompt> {
  const inWindow = new Set<number>();
  const referenced: string[] = [];
  const windowed: string[] = [];
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index];
    if (message?.role !== 'user') continue;
    const ids = message.content.flatMap((part) => referenceOf(part) ?? []);
    if (ids.length === 0) continue;
    referenced.push(...ids);
    if (inWindow.size < options.window) {
      inWindow.add(index);
      windowed.push(...ids);
    }
  }
  if (referenced.length === 0) return prompt;
  const [described, bytes] = await Promise.all([options.describe(referenced), options.bytes(windowed)]);
  return prompt.map((message, index) => {
    if (message.role !== 'user') return message;
    const content = message.content.map((part): UserPart => {
      const id = referenceOf(part);
      if (!id || part.type !== 'file') return part;
      const attachment = described.get(id);
      const data = bytes.get(id);
      if (!attachment) return { type: 'text', text: IMAGE_NOT_AVAILABLE };
      if (!inWindow.has(index)) return { type: 'text', text: olderImageNote(attachment) };
      if (!data) return { type: 'text', text: IMAGE_NOT_AVAILABLE };
      return { ...part, mediaType: attachment.mediaType, data: { type: 'data', data } };
    });
    return { ...message, content };
  });
}

/** An image older than the window, as the model reads it: named, not shown. */
export function olderImageNote(attachment: Attachment): string {
  const kind = imageKind(attachment.mediaType);
  return `[earlier image, not shown: ${attachment.name} (${kind} ${attachment.width}x${attachment.height})]`;
}
