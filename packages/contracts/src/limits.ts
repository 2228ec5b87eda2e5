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

/** Largest document (PDF, Word, text) accepted, counted as it arrives (`413 too_large` past it). */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;

/** Most pages a PDF may have (`413 too_large` past it): its text is extracted page by page at upload. */
export const MAX_DOCUMENT_PAGES = 500;

/** Most characters of text kept from one document's PDF (a few bytes can expand to a lot of text). */
export const MAX_DOCUMENT_TEXT_CHARS = 4_000_000;

/**
 * A Word document (DOCX) is a zip: at most this many parts, unpacking to at most this many bytes
 * together (a zip of a few hundred kilobytes can unpack to gigabytes). Checked from the zip's own
 * directory before anything is unpacked, and again while unpacking, since that directory can lie.
 */
export const MAX_DOCX_PARTS = 2_000;
export const MAX_DOCX_UNPACKED_BYTES = 64 * 1024 * 1024;

/**
 * How much of documents' text the model gets, in tokens: all documents of one message together,
 * and all documents of one model call (the newest messages first). What does not fit is cut, with
 * a note saying what was read.
 */
export const DOCUMENT_TOKENS_PER_MESSAGE = 24_000;
export const DOCUMENT_TOKENS_PER_TURN = 48_000;

/** Most images and documents one message carries, together. */
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

/**
 * An import (`POST /api/imports`, P2) is one chat export, images inside: its body is bounded as it
 * arrives like any other, at this size (an export larger than this cannot be imported here), and
 * what it holds is bounded in count. Several times any chat a person writes by hand; an export is
 * refused past them (`413 too_large`), naming the bound.
 */
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;
export const MAX_IMPORT_MESSAGES = 20_000;
export const MAX_IMPORT_VERSIONS = 500;
/** Messages one version of an import holds (a version lists its copies of earlier messages too). */
export const MAX_IMPORT_VERSION_MESSAGES = 20_000;
export const MAX_IMPORT_IMAGES = 200;
export const MAX_IMPORT_DOCUMENTS = 200;
export const MAX_IMPORT_NOTES = 2_000;
export const MAX_IMPORT_APPROVALS = 2_000;
/** The longest text one part of an exported message (or a note) may hold, in UTF-16 units. */
export const MAX_EXPORT_TEXT_LENGTH = 1_000_000;

/** Default and largest page of `GET /api/threads`. */
export const THREAD_PAGE_DEFAULT = 50;
export const THREAD_PAGE_MAX = 200;

/**
 * The longest custom instructions (M4, per chat or per account), in UTF-16 units: a page of text,
 * well inside any model's window, and small enough to give with every call.
 */
export const MAX_INSTRUCTIONS_LENGTH = 4_000;

/**
 * The most characters of a tool's result (as JSON) that reach the model and the transcript; a
 * longer result is cut to this and says so ("result truncated").
 */
export const MAX_TOOL_RESULT_CHARS = 16_000;
