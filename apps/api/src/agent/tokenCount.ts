import { createRequire } from 'node:module';
import type { LanguageModelV4Message } from '@ai-sdk/provider';

/**
 * Token counts (C1, C2): one home for how a text, a stored message and a model prompt are counted,
 * so the context meter, the compaction threshold and the built-in local model's reported usage
 * agree. An OpenAI model is counted with `gpt-tokenizer` and its encoding; a model it does not know
 * (an OpenAI-compatible server's) with `o200k_base`, an estimate. The built-in local model is no
 * GPT model and has no byte-pair vocabulary: it counts `local_words` (below), so a server that runs
 * only the local model never loads a tokenizer's ranks (70 MB of resident memory for `o200k_base`).
 */

export const tokenEncodings = ['o200k_base', 'cl100k_base', 'local_words'] as const;
export type TokenEncoding = (typeof tokenEncodings)[number];
type RankedEncoding = Exclude<TokenEncoding, 'local_words'>;

/** What each message adds besides its content (role and separators), as chat formats do. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** An image's share of a message: a fixed estimate (its bytes are not counted as text). */
export const IMAGE_TOKENS = 85;

// Text a person typed may contain a special token's spelling; it is counted as plain text.
const asPlainText = { disallowedSpecial: new Set<string>() };
type Counter = (text: string, options: typeof asPlainText) => number;
const load = createRequire(import.meta.url);
const counters: Partial<Record<RankedEncoding, Counter>> = {};

/**
 * An encoding's counter, loaded on its first use: each encoding's ranks hold 40-70 MB for the
 * life of the process, and a server counts with its model's one only.
 */
function counterOf(encoding: RankedEncoding): Counter {
  counters[encoding] ??= (load(`gpt-tokenizer/encoding/${encoding}`) as { countTokens: Counter }).countTokens;
  return counters[encoding];
}

/** The encoding of a configured model (`local`, `openai:<model>`). */
export function encodingOfModel(model: string): TokenEncoding {
  if (model === 'local') return 'local_words';
  const id = model.startsWith('openai:') ? model.slice('openai:'.length) : model;
  // The GPT-4 and GPT-3.5 families before GPT-4o; everything newer (and unknown) is o200k.
  return /^(gpt-4(?!o|\.)|gpt-3\.5)/.test(id) ? 'cl100k_base' : 'o200k_base';
}

export function countTextTokens(text: string, encoding: TokenEncoding): number {
  if (text === '') return 0;
  return encoding === 'local_words' ? countLocalWords(text) : counterOf(encoding)(text, asPlainText);
}

/**
 * A run of letters or digits, one CJK character (those scripts write words without spaces), or one
 * other visible character.
 */
const LOCAL_PIECE =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}_]+|[^\s]/gu;
/** Letters a token of a long word holds, about as a byte-pair vocabulary splits one. */
const LOCAL_LETTERS_PER_TOKEN = 6;

/**
 * The local model's count: a token per short word, punctuation mark or CJK character, and one more
 * per six letters of a long word. Close to a byte-pair count for English (within about a third),
 * cheap, and the same on every server.
 */
function countLocalWords(text: string): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(LOCAL_PIECE))
    tokens += Math.ceil(piece.length / LOCAL_LETTERS_PER_TOKEN);
  return tokens;
}

/** A system text the model gets (the instructions, a summary) as one message. */
export function countSystemTokens(text: string, encoding: TokenEncoding): number {
  return MESSAGE_OVERHEAD_TOKENS + countTextTokens(text, encoding);
}

function jsonText(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** A stored message's parts (memory's `format: 2`): text, tool calls with their results, files. */
export function countStoredParts(
  parts: ReadonlyArray<{ type: string; [key: string]: unknown }>,
  encoding: TokenEncoding,
): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const part of parts) {
    if (part.type === 'text') tokens += countTextTokens(String(part.text ?? ''), encoding);
    else if (part.type === 'file' || part.type === 'image') tokens += IMAGE_TOKENS;
    else if (part.type === 'tool-invocation') {
      const invocation = (part.toolInvocation ?? {}) as { args?: unknown; result?: unknown };
      tokens += countTextTokens(jsonText(invocation.args), encoding);
      tokens += countTextTokens(jsonText(invocation.result), encoding);
    }
  }
  return tokens;
}

/** A message of a model prompt, counted the way its stored form is (the local model's usage). */
export function countPromptMessage(message: LanguageModelV4Message, encoding: TokenEncoding): number {
  if (message.role === 'system') return countSystemTokens(message.content, encoding);
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.content) {
    if (part.type === 'text') tokens += countTextTokens(part.text, encoding);
    else if (part.type === 'file') tokens += IMAGE_TOKENS;
    else if (part.type === 'tool-call') tokens += countTextTokens(jsonText(part.input), encoding);
    else if (part.type === 'tool-result') tokens += countTextTokens(jsonText(part.output), encoding);
  }
  return tokens;
}
