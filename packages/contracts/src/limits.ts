/**
 * The largest request body the API parses, and the web app's proxy lets through (the longest
 * message is 32,000 characters; JSON escapes can multiply its bytes). Both count bytes as they
 * arrive and stop at this limit with `413 too_large`.
 */
export const MAX_JSON_BODY_BYTES = 512 * 1024;
