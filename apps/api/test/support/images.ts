import type { Attachment } from '@chat/contracts';
import type { ApiClient } from './client';

/**
 * Image bytes for tests: a real header (what the API sniffs) followed by `size` bytes in all,
 * so a "5 MB photo" costs no encoder.
 */

function padded(header: Uint8Array, size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(Math.max(size, header.length));
  bytes.set(header);
  // Not zeros: a store that compressed would otherwise hide a size problem.
  for (let index = header.length; index < bytes.length; index++) bytes[index] = (index * 2654435761) >>> 24;
  return bytes;
}

export function pngBytes(width: number, height: number, size = 64): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array(24);
  header.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(header.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  return padded(header, size);
}

export function jpegBytes(width: number, height: number, size = 64): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    0x4a,
    0x46,
    0x49,
    0x46,
    0x00,
    0x01,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
  ]);
  return padded(header, size);
}

export function gifBytes(width: number, height: number): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array([
    0x47,
    0x49,
    0x46,
    0x38,
    0x39,
    0x61,
    width & 0xff,
    width >> 8,
    height & 0xff,
    height >> 8,
  ]);
  return padded(header, 32);
}

export function webpBytes(width: number, height: number): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array(30);
  header.set(
    [...'RIFF'].map((c) => c.charCodeAt(0)),
    0,
  );
  header.set(
    [...'WEBPVP8X'].map((c) => c.charCodeAt(0)),
    8,
  );
  const w = width - 1;
  const h = height - 1;
  header.set([w & 0xff, (w >> 8) & 0xff, (w >> 16) & 0xff, h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff], 24);
  return padded(header, 40);
}

/** POSTs one file as multipart, the way a browser's FormData does. */
export async function upload(
  client: ApiClient,
  threadId: string,
  bytes: Uint8Array<ArrayBuffer>,
  name = 'photo.png',
  type = 'image/png',
): Promise<Response> {
  const form = new FormData();
  form.append('file', new File([bytes], name, { type }));
  return await fetch(`${client.baseUrl}/api/threads/${threadId}/attachments`, {
    method: 'POST',
    headers: { cookie: client.cookieHeader, origin: 'http://localhost:3000' },
    body: form,
  });
}

/** Uploads and expects `201 { attachment }`. */
export async function uploaded(
  client: ApiClient,
  threadId: string,
  bytes: Uint8Array<ArrayBuffer>,
  name = 'photo.png',
): Promise<Attachment> {
  const response = await upload(client, threadId, bytes, name);
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { attachment: Attachment }).attachment;
}

/** Sends a message carrying images; returns the raw response. */
export async function sendWithImages(
  client: ApiClient,
  threadId: string,
  text: string,
  attachmentIds: string[],
): Promise<Response> {
  return await client.fetch('POST', `/api/threads/${threadId}/turns`, {
    clientRequestId: crypto.randomUUID(),
    text,
    attachmentIds,
  });
}
