import type { LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { imageKind, sniffImage } from '../platform/imageInfo';

/**
 * What the local model says about the images it received, so tests and QA can see the bytes
 * arrived: `I see 2 images: png 640x480, jpeg 1024x768.` for the images of the last user message
 * (read from their bytes), and `(1 earlier image in context.)` for images of earlier messages that
 * reached it as bytes. Undefined when it received none.
 */
export function imageSentence(prompt: LanguageModelV4Prompt): string | undefined {
  const users = prompt.filter((message) => message.role === 'user');
  const last = users.at(-1);
  const seen = last ? imagesOf(last) : [];
  const earlier = users.slice(0, -1).reduce((total, message) => total + imagesOf(message).length, 0);
  const sentences: string[] = [];
  if (seen.length > 0) {
    sentences.push(`I see ${seen.length} image${seen.length === 1 ? '' : 's'}: ${seen.join(', ')}.`);
  }
  if (earlier > 0) sentences.push(`(${earlier} earlier image${earlier === 1 ? '' : 's'} in context.)`);
  return sentences.length > 0 ? sentences.join(' ') : undefined;
}

/** `png 640x480` for each image part whose bytes arrived. */
function imagesOf(message: LanguageModelV4Message): string[] {
  if (message.role !== 'user') return [];
  return message.content.flatMap((part) => {
    if (part.type !== 'file' || !part.mediaType.startsWith('image')) return [];
    const bytes = bytesOf(part.data);
    if (!bytes) return [];
    const info = sniffImage(bytes);
    return [info ? `${imageKind(info.mediaType)} ${info.width}x${info.height}` : 'unreadable image'];
  });
}

function bytesOf(data: { type: string; data?: unknown }): Uint8Array | undefined {
  if (data.type !== 'data') return undefined;
  if (data.data instanceof Uint8Array) return data.data;
  // A string is base64 to a model; our own references never reach it unresolved.
  if (typeof data.data === 'string' && !data.data.startsWith('/')) return Buffer.from(data.data, 'base64');
  return undefined;
}
