/**
 * Every size and count the product bounds, in one place: the API enforces them, the web app says
 * them before the server would refuse, and the error wording (errors.ts) is built from them.
 * Rate limits are configuration (the API's RATE_LIMIT_* variables); password lengths are with the
 * account contracts.
 */

/** Most queued turns a thread holds, not counting the running one (Q4). */
export const QUEUE_CAPACITY = 5;

/** Longest message text in characters (Unicode code points), counted after trimming. */
export const MAX_TEXT_LENGTH = 32_000;

/** Longest feedback comment, in characters (code points), after trimming (413 `too_large` beyond). */
export const MAX_FEEDBACK_COMMENT_LENGTH = 2_000;

/** Largest image accepted, counted as it arrives (`413 too_large` past it). */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/**
 * Largest image dimensions accepted, as the image's own header states them: each side, and the
 * pixel count. A few bytes can claim any size (a 30-byte WebP says 16777216 x 16777216); whatever
 * decodes the image later (a browser, a model provider, a thumbnailer) would need memory for that.
 */
export const MAX_IMAGE_SIDE = 16_384;
export const MAX_IMAGE_PIXELS = 50_000_000;

/** Most images one message carries. */
export const MAX_ATTACHMENTS_PER_MESSAGE = 4;

/**
 * The largest request body the API parses, and the web app's proxy lets through (the longest
 * message is 32,000 characters; JSON escapes can multiply its bytes). Both count bytes as they
 * arrive and stop at this limit with `413 too_large`.
 */
export const MAX_JSON_BODY_BYTES = 512 * 1024;

/**
 * The deepest nesting of arrays and objects a body may have. No request needs more than a few
 * levels; a parser or validator that recurses (better-auth's, zod's, a logger's) would run out of
 * stack on a body nested hundreds of thousands deep, which fits easily in the size bound.
 */
export const MAX_JSON_DEPTH = 64;

/** Default and largest page of `GET /api/threads`. */
export const THREAD_PAGE_DEFAULT = 50;
export const THREAD_PAGE_MAX = 200;
