import { refusalMessages } from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import type { ThreadListPosition } from './repository';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The opaque `nextCursor` of the thread list: where the next page starts. */
export function encodeThreadCursor(position: ThreadListPosition): string {
  return Buffer.from(`${position.updatedAt}|${position.id}`, 'utf8').toString('base64url');
}

/** A cursor this API made, else `400 bad_request` (a cursor is never trusted to be well formed). */
export function decodeThreadCursor(cursor: string): ThreadListPosition {
  const [updatedAt = '', id = '', ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !TIMESTAMP.test(updatedAt) || !UUID.test(id) || Number.isNaN(Date.parse(updatedAt)))
    throw new ApiError('bad_request', refusalMessages.bad_request.cursor);
  return { updatedAt, id };
}
