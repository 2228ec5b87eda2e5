import {
  type ImageMediaType,
  MAX_ATTACHMENT_BYTES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  refusalMessages,
} from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import { sniffImage } from '../../platform/imageInfo';

/** An image that passed the checks, described from its own bytes. */
export interface CheckedImage {
  name: string;
  mediaType: ImageMediaType;
  size: number;
  width: number;
  height: number;
}

/**
 * The checks every image passes before it is stored, whether it is uploaded or comes with an
 * imported chat: at most MAX_ATTACHMENT_BYTES (`413 too_large`), one of the accepted kinds by its
 * bytes, never by a name or a declared type (`415 unsupported_media_type`), and within the
 * dimension bounds its own header states (`413 too_large`). The name is made safe to show.
 */
export function checkImage(bytes: Uint8Array, name: string): CheckedImage {
  const image = checkedImage(bytes, name);
  if (!image) throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.image);
  return image;
}

/**
 * The same checks for bytes that may be something else (an upload that may be a document):
 * undefined when they are not an image at all.
 */
export function checkedImage(bytes: Uint8Array, name: string): CheckedImage | undefined {
  const info = sniffImage(bytes);
  if (!info) return undefined;
  if (bytes.byteLength > MAX_ATTACHMENT_BYTES)
    throw new ApiError('too_large', refusalMessages.too_large.image);
  if (!withinImageBounds(info)) throw new ApiError('too_large', refusalMessages.too_large.imageDimensions);
  return {
    name: cleanName(name, info.mediaType),
    mediaType: info.mediaType,
    size: bytes.byteLength,
    width: info.width,
    height: info.height,
  };
}

/** Each side and the pixel count within the contract's bounds (checked before anything is stored). */
function withinImageBounds(info: { width: number; height: number }): boolean {
  return (
    info.width <= MAX_IMAGE_SIDE &&
    info.height <= MAX_IMAGE_SIDE &&
    info.width * info.height <= MAX_IMAGE_PIXELS
  );
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/csv': 'csv',
  'application/json': 'json',
};

/** A file name safe to show and to send back in a header: no path, no control characters, bounded. */
export function cleanName(name: string, mediaType: string): string {
  const base = (name.split(/[/\\]/).at(-1) ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 200);
  const stem = mediaType.startsWith('image/') ? 'image' : 'document';
  return base || `${stem}.${EXTENSIONS[mediaType] ?? 'bin'}`;
}
