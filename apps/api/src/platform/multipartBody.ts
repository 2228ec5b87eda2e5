import { refusalMessages } from '@chat/contracts';
import type { H3Event } from 'h3';
import { ApiError } from './errors';
import { readBounded, tooLarge } from './requestBody';

/** Room for the multipart framing around the file (boundaries, part headers, a name). */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

/**
 * The one file of a `multipart/form-data` upload (`415 unsupported_media_type` for any other
 * body), counted as it arrives: a declared length past `maxFileBytes` is refused before a byte is
 * read, a chunked body is cut off at the bound (`413 too_large`), so an oversized upload is never
 * read whole. The bytes are parsed only once they are known to fit.
 */
export async function readUploadedFile(event: H3Event, maxFileBytes: number): Promise<UploadedFile> {
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.multipart);
  }
  const limit = maxFileBytes + MULTIPART_OVERHEAD_BYTES;
  if (Number(event.req.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  const body = await readBounded(event.req.body, limit);
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': type } }).formData();
  } catch {
    throw new ApiError('bad_request', refusalMessages.bad_request.notMultipart);
  }
  const files = [...form.values()].filter((value): value is File => typeof value !== 'string');
  const [file] = files;
  if (!file || files.length > 1) throw new ApiError('bad_request', refusalMessages.bad_request.oneFile);
  if (file.size > maxFileBytes) throw tooLarge();
  return { name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) };
}
