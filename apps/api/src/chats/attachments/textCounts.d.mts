export type TextCounts = { ok: true; words: number; lines: number } | { ok: false; reason: 'binary' };
export function readText(bytes: Uint8Array): TextCounts;
export function countWords(text: string): number;
export function countBreaks(text: string, at: string): number;
