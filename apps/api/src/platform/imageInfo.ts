import type { ImageMediaType } from '@chat/contracts';

/** What an image's own header says it is. */
export interface ImageInfo {
  mediaType: ImageMediaType;
  width: number;
  height: number;
}

/**
 * Recognises PNG, JPEG, WebP and GIF by their bytes (magic numbers), and reads their dimensions
 * from the header. Anything else, whatever its name or declared type, is undefined; so is an image
 * whose header is cut short or claims no pixels.
 */
export function sniffImage(bytes: Uint8Array): ImageInfo | undefined {
  const info = pngInfo(bytes) ?? gifInfo(bytes) ?? webpInfo(bytes) ?? jpegInfo(bytes);
  if (!info || info.width <= 0 || info.height <= 0) return undefined;
  return info;
}

/** The short name of a media type (`png`, `jpeg`, ...), as the local model and notes say it. */
export function imageKind(mediaType: string): string {
  return mediaType.replace(/^image\//, '');
}

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) =>
  prefix.every((byte, index) => bytes[at + index] === byte);

const ascii = (bytes: Uint8Array, at: number, text: string) =>
  startsWith(
    bytes,
    [...text].map((char) => char.charCodeAt(0)),
    at,
  );

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function pngInfo(bytes: Uint8Array): ImageInfo | undefined {
  if (bytes.length < 24 || !startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    return undefined;
  if (!ascii(bytes, 12, 'IHDR')) return undefined;
  const data = view(bytes);
  return { mediaType: 'image/png', width: data.getUint32(16), height: data.getUint32(20) };
}

function gifInfo(bytes: Uint8Array): ImageInfo | undefined {
  if (bytes.length < 10 || !(ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a'))) return undefined;
  const data = view(bytes);
  return { mediaType: 'image/gif', width: data.getUint16(6, true), height: data.getUint16(8, true) };
}

function webpInfo(bytes: Uint8Array): ImageInfo | undefined {
  if (bytes.length < 30 || !ascii(bytes, 0, 'RIFF') || !ascii(bytes, 8, 'WEBP')) return undefined;
  const data = view(bytes);
  const image = (width: number, height: number): ImageInfo => ({ mediaType: 'image/webp', width, height });
  if (ascii(bytes, 12, 'VP8 ')) {
    // Lossy: a key frame's start code, then 14-bit width and height.
    if (!startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return undefined;
    return image(data.getUint16(26, true) & 0x3fff, data.getUint16(28, true) & 0x3fff);
  }
  if (ascii(bytes, 12, 'VP8L')) {
    // Lossless: a signature byte, then width-1 and height-1 in 14 bits each.
    if (bytes[20] !== 0x2f) return undefined;
    const bits = data.getUint32(21, true);
    return image((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(bytes, 12, 'VP8X')) {
    // Extended: canvas width-1 and height-1 in 24 bits each.
    const width = (bytes[24] ?? 0) | ((bytes[25] ?? 0) << 8) | ((bytes[26] ?? 0) << 16);
    const height = (bytes[27] ?? 0) | ((bytes[28] ?? 0) << 8) | ((bytes[29] ?? 0) << 16);
    return image(width + 1, height + 1);
  }
  return undefined;
}

/** Start-of-frame markers that carry the dimensions (not DHT 0xc4, JPG 0xc8, DAC 0xcc). */
const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegInfo(bytes: Uint8Array): ImageInfo | undefined {
  if (!startsWith(bytes, [0xff, 0xd8, 0xff])) return undefined;
  const data = view(bytes);
  let offset = 2;
  // Walks the segments (each names its own length) until a frame header; bounded by the bytes.
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1] ?? 0;
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      offset += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined;
    const length = data.getUint16(offset + 2);
    if (SOF_MARKERS.has(marker)) {
      return {
        mediaType: 'image/jpeg',
        height: data.getUint16(offset + 5),
        width: data.getUint16(offset + 7),
      };
    }
    if (length < 2) return undefined;
    offset += 2 + length;
  }
  return undefined;
}
