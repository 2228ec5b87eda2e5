import { refusalMessages } from '@chat/contracts';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { H3Event } from 'h3';
import { ApiError } from './errors';
import { discardBody, discardRest, refuseRest } from './requestBody';

/** Room for the multipart framing around the file (boundaries, part headers, a few fields). */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/**
 * What one upload may hold besides its file. A browser's FormData of one file is one part with two
 * header lines; the bounds leave room for a few fields and stop a body of thousands of tiny parts
 * (each one costs the parser more than its bytes) at the first part past them. The parser keeps
 * at most `headerSize` bytes of a part's header block and drops the rest.
 */
const PART_LIMITS = {
  parts: 4,
  headerPairs: 8,
  headerSize: 16 * 1024,
  fields: 3,
  fieldNameSize: 100,
  fieldSize: 1024,
};

/**
 * No file system holds a longer name. The parser cuts a header past `headerSize` without a word,
 * so a name this long is refused here rather than taken cut short.
 */
const MAX_FILE_NAME_CHARACTERS = 1024;

export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

const notMultipart = () => new ApiError('bad_request', refusalMessages.bad_request.notMultipart);
const notOneFile = () => new ApiError('bad_request', refusalMessages.bad_request.oneFile);
const fileNameTooLong = () =>
  new ApiError('bad_request', refusalMessages.bad_request.fileNameTooLong(MAX_FILE_NAME_CHARACTERS));
const tooManyParts = () =>
  new ApiError('bad_request', refusalMessages.bad_request.tooManyParts(PART_LIMITS.parts - 1));

/**
 * The one file of a `multipart/form-data` upload (`415 unsupported_media_type` for any other
 * body), parsed as it arrives: a declared length past the bound is refused before a byte is read,
 * a body that grows past it (chunked), a file past `maxFileBytes`, too many parts, a file name
 * too long, or a second file is refused as soon as it shows (`413 too_large` by the caller's
 * `tooLargeFile`, which names its bound / `400 bad_request`).
 * The rest of a refused body is read and thrown away within bounds (`refuseRest`), so the client
 * can read the answer. Each chunk is parsed in its own turn of the event loop: an upload never
 * holds the process for longer than one chunk takes.
 */
export async function readUploadedFile(
  event: H3Event,
  maxFileBytes: number,
  tooLargeFile: () => ApiError,
): Promise<UploadedFile> {
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.multipart);
  }
  const limit = maxFileBytes + MULTIPART_OVERHEAD_BYTES;
  if (Number(event.req.headers.get('content-length') ?? 0) > limit) {
    await refuseRest(event, discardBody(event.req.body), tooLargeFile());
  }
  const body = event.req.body;
  if (!body) throw notOneFile();

  let parser: BusboyInstance;
  try {
    parser = new Busboy({
      headers: { 'content-type': type },
      limits: { ...PART_LIMITS, files: 1, fileSize: maxFileBytes },
    });
  } catch {
    // A multipart type without a usable boundary.
    return await refuseRest(event, discardBody(body), notMultipart());
  }

  let refusal: ApiError | undefined;
  const refuse = (error: ApiError) => {
    refusal ??= error;
  };
  const file = { name: '', chunks: [] as Buffer[], size: 0, seen: false };
  parser.on('file', (_field, stream, filename) => {
    // Dropping the parser inside a file (a refusal while the file still arrives) fails the file's
    // own stream with "Unexpected end of file": unheard, that error would end the process.
    stream.on('error', () => refuse(notMultipart()));
    if (file.seen) {
      refuse(notOneFile());
      stream.resume();
      return;
    }
    file.seen = true;
    if ((filename ?? '').length > MAX_FILE_NAME_CHARACTERS) {
      refuse(fileNameTooLong());
      stream.resume();
      return;
    }
    file.name = unescapeFormName(filename ?? '');
    stream.on('data', (data: Buffer) => {
      file.chunks.push(data);
      file.size += data.byteLength;
    });
    stream.on('limit', () => refuse(tooLargeFile()));
  });
  parser.on('partsLimit', () => refuse(tooManyParts()));
  parser.on('fieldsLimit', () => refuse(tooManyParts()));
  parser.on('filesLimit', () => refuse(notOneFile()));
  const finished = new Promise<void>((resolve) => {
    parser.on('finish', resolve);
    parser.on('error', () => {
      refuse(notMultipart());
      resolve();
    });
  });

  const reader = body.getReader();
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) refuse(tooLargeFile());
    if (!refusal && !parser.write(value)) {
      await Promise.race([new Promise((resolve) => parser.once('drain', resolve)), finished]);
    }
    if (refusal) {
      parser.destroy();
      await refuseRest(event, discardRest(reader), refusal);
    }
    // Other requests get their turn between two chunks of an upload.
    await new Promise((resolve) => setImmediate(resolve));
  }
  parser.end();
  await finished;
  if (refusal) throw refusal;
  if (!file.seen) throw notOneFile();
  return { name: file.name, bytes: Buffer.concat(file.chunks, file.size) };
}

/**
 * Browsers write `"`, CR and LF in a multipart file name as `%22`, `%0D` and `%0A` (the HTML
 * standard's form encoding); the name a person gave is the one with them put back.
 */
function unescapeFormName(name: string): string {
  return name.replace(/%(22|0d|0a)/gi, (escaped) => decodeURIComponent(escaped));
}
