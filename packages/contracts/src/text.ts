/**
 * Characters that show nothing on their own: whitespace, controls, format characters (zero-width
 * space and joiners, bidi marks, the BOM, soft hyphen, tag characters), variation selectors and the
 * blank fillers (Hangul fillers, the braille blank). Text made only of these is empty to a reader.
 */
const INVISIBLE_ONLY =
  /^(?:[\s\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\u115F\u1160\u17B4\u17B5\u180E\u2800\u3164\uFFA0]|\u034F|[\uFE00-\uFE0F]|[\u{E0100}-\u{E01EF}])*$/u;

/** Whether a person would see anything of `text` (messages and titles without it count as empty). */
export function hasVisibleText(text: string): boolean {
  return !INVISIBLE_ONLY.test(text);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a string from a request cannot be stored as sent, or null when it can: PostgreSQL refuses
 * U+0000 in text, and a lone surrogate is not a character (it would be changed, not stored).
 */
export function unstorableTextReason(text: string): string | null {
  if (text.includes('\u0000')) return 'contains the character U+0000';
  if (LONE_SURROGATE.test(text)) return 'contains a lone surrogate';
  return null;
}
