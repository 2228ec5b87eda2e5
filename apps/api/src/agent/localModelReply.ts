import type { LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { isSummaryRequest, readSummaryForModel, readSummaryRequest } from './contextSummary';
import { parseDocumentPrompt } from './documentPrompt';
import { isHandoffInstruction } from './handoffInstruction';
import { type LocalModelDirectives, parseDirectives } from './localModelDirectives';
import { documentSentence } from './localModelDocuments';
import { imageSentence } from './localModelImages';
import { readSteerReminder } from './steerReminder';
import { countPromptMessage, countTextTokens, type TokenEncoding } from './tokenCount';

/** The local model counts tokens like the meter does, so its reported usage is predictable. */
export const LOCAL_MODEL_ENCODING: TokenEncoding = 'local_words';

/**
 * What the built-in local model says: the words of its reply, planned up front from the prompt
 * (deterministic for the same input), so the streaming side only paces them out.
 */

const QUOTE_MAX_CHARS = 200;
const HANDOFF_OPENING = '(after interruption)';
const STEERED_OPENING = '(steered)';

// Whole sentences (about 12 words each) keep the filler readable in the UI and in transcripts.
const FILLER_SENTENCES = [
  'The answer depends on a few simple ideas that fit together well.',
  'First we look at what you asked and then at how the parts connect.',
  'In practice most questions like this have clear tradeoffs worth naming early.',
  'A small example often helps because it shows where the details matter.',
  'It is useful to keep notes short, honest and easy to check later.',
  'When things change, the same steps still work with only minor adjustments.',
  'One good approach is to start simple and add detail only when needed.',
  'Each choice has a cost, so it pays to write the reasons down.',
  'Testing the idea on real data usually settles the question faster than debate.',
  'If something feels unclear, asking one precise question saves a lot of time.',
  'The next step builds on this one, so it is worth getting right.',
  'Good defaults matter more than clever options that few people ever use.',
  'A clear name for each part makes the whole system easier to follow.',
  'Most problems become smaller once you split them into independent pieces.',
  'Keep the common case fast and make the rare case merely correct.',
  'Writing the plan down first tends to reveal the gaps in it.',
];

/**
 * The `[[markdown]]` reply: everything the web renderer handles, so QA sees it without a real
 * provider. Fixed text, so tests can rely on it.
 */
const MARKDOWN_SAMPLE = [
  '## What a reply can hold',
  '',
  'A list, with **bold** and `inline code`:',
  '',
  '- Headings and paragraphs',
  '- Lists like this one',
  '- Code, tables and [links](https://commonmark.org/help/)',
  '',
  '```ts',
  'function greet(name: string): string {',
  '  // A long line shows that wide code scrolls sideways instead of breaking the layout of the reply around it.',
  "  return 'Hello, ' + name + '!';",
  '}',
  '```',
  '',
  '| Part | Shown as |',
  '| --- | --- |',
  '| Heading | h2 |',
  '| Code | highlighted block |',
  '',
  'That is all.',
].join('\n');

export interface PlannedReply {
  /** Tokens of the reply, counted like a stored message's text. */
  outputTokens: number;
  /**
   * The pieces streamed one at a time. Normally words, joined with single spaces; with
   * `verbatim`, each piece carries its own leading whitespace (newlines included).
   */
  words: string[];
  verbatim: boolean;
  directives: LocalModelDirectives;
  inputTokens: number;
}

function quoteAll(texts: string[]): string {
  return texts.map((text) => `"${truncateQuote(parseDirectives(text).cleanText)}"`).join(' | ');
}

function textOf(message: LanguageModelV4Message): string {
  if (message.role === 'system') return message.content;
  const texts: string[] = [];
  for (const part of message.content) {
    // A document's text is what the person attached, not what they wrote (no quote, no directives).
    if (part.type === 'text' && !parseDocumentPrompt(part.text)) texts.push(part.text);
  }
  return texts.join('\n');
}

function truncateQuote(text: string): string {
  if (text.length <= QUOTE_MAX_CHARS) return text;
  const cut = text.slice(0, QUOTE_MAX_CHARS);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > QUOTE_MAX_CHARS / 2 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}

// FNV-1a: a tiny stable hash so the same message always gets the same filler.
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

// mulberry32: deterministic pseudo-random numbers in [0, 1) from a 32-bit seed.
function createRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

function fillerWords(count: number, seed: number): string[] {
  const random = createRandom(seed);
  const words: string[] = [];
  while (words.length < count) {
    const sentence = FILLER_SENTENCES[Math.floor(random() * FILLER_SENTENCES.length)] ?? '';
    words.push(...sentence.split(' '));
  }
  const kept = words.slice(0, count);
  const lastWord = kept.at(-1);
  if (lastWord !== undefined && !lastWord.endsWith('.')) {
    kept[kept.length - 1] = `${lastWord.replace(/[,;:]$/, '')}.`;
  }
  return kept;
}

/**
 * The message this turn answers, and the steers it received. Steers delivered mid-reply are user
 * messages after a tool result, quoted by the steer reminder; the turn's own message is the last
 * user message before them (a requeued steer, run as a turn of its own, is its own message).
 */
export interface TurnPrompt {
  index: number;
  directives: LocalModelDirectives;
  steers: string[];
  /** User texts before the turn's message. */
  earlier: string[];
}

export function turnOf(prompt: LanguageModelV4Prompt): TurnPrompt {
  const reminders = prompt.flatMap((message) => {
    const reminder = message.role === 'system' ? readSteerReminder(message.content) : undefined;
    return reminder ? [reminder] : [];
  });
  const steers = reminders.flatMap((reminder) => reminder.steers);
  // Steers delivered into this reply (not late ones, which are the turn's own message).
  const injectedTexts = reminders.filter((reminder) => !reminder.late).flatMap((reminder) => reminder.steers);
  let index = prompt.findLastIndex((message) => message.role === 'user');
  for (;;) {
    const message = prompt[index];
    const before = prompt[index - 1];
    const injected =
      message !== undefined &&
      injectedTexts.includes(textOf(message)) &&
      (before?.role === 'tool' || before?.role === 'user');
    if (!injected) break;
    index = prompt.slice(0, index).findLastIndex((candidate) => candidate.role === 'user');
  }
  const turnMessage = prompt[index];
  const turnText = turnMessage ? textOf(turnMessage) : '';
  const earlier = prompt
    .slice(0, Math.max(0, index))
    .filter((message) => message.role === 'user')
    .map(textOf);
  return { index, directives: parseDirectives(turnText), steers, earlier };
}

/** The directives of the message this turn answers: what the local model is asked to do. */
export function directivesOf(prompt: LanguageModelV4Prompt): LocalModelDirectives {
  return turnOf(prompt).directives;
}

/** `toolSentence`: what a tool step of this turn gave (see localModelTools.ts), said first. */
export function planReply(prompt: LanguageModelV4Prompt, toolSentence?: string): PlannedReply {
  const { directives, steers, earlier } = turnOf(prompt);
  const afterInterruption = prompt.some(
    (message) => message.role === 'system' && isHandoffInstruction(message.content),
  );

  const opening: string[] = [];
  if (afterInterruption) opening.push(HANDOFF_OPENING);
  if (steers.length > 0) {
    opening.push(STEERED_OPENING);
    const added = steers.filter((text) => parseDirectives(text).cleanText !== directives.cleanText);
    if (added.length > 0) opening.push(`You added: ${quoteAll(added)}.`);
  }
  if (toolSentence) opening.push(toolSentence);
  const images = imageSentence(prompt);
  if (images) opening.push(images);
  const documents = documentSentence(prompt);
  if (documents) opening.push(documents);
  if (directives.history) {
    // The summary a compaction gave this call (C3), then the user messages it still sees whole.
    const summary = prompt
      .map((message) => (message.role === 'system' ? readSummaryForModel(message.content) : undefined))
      .find((text) => text !== undefined);
    if (summary !== undefined) opening.push(`Summary: "${truncateQuote(summary)}".`);
    opening.push(`History: ${earlier.length > 0 ? quoteAll(earlier) : '(none)'}`);
  }
  opening.push(`You said: "${truncateQuote(directives.cleanText)}".`);
  const openingWords = opening.join(' ').split(/\s+/).filter(Boolean);

  const inputTokens = promptTokens(prompt);
  if (directives.markdown) {
    const document = `${opening.join(' ')}\n\n${MARKDOWN_SAMPLE}`;
    const words = document.match(/\s*\S+/g) ?? [];
    return { words, verbatim: true, directives, inputTokens, outputTokens: tokensOf(words, true) };
  }

  // With [[history]] the whole opening is the evidence a test reads, so it is never cut.
  const words =
    !directives.history && openingWords.length >= directives.words
      ? openingWords.slice(0, directives.words)
      : [
          ...openingWords,
          ...fillerWords(Math.max(0, directives.words - openingWords.length), hashText(directives.cleanText)),
        ];

  return { words, verbatim: false, directives, inputTokens, outputTokens: tokensOf(words, false) };
}

function promptTokens(prompt: LanguageModelV4Prompt): number {
  return prompt.reduce((total, message) => total + countPromptMessage(message, LOCAL_MODEL_ENCODING), 0);
}

function tokensOf(words: string[], verbatim: boolean): number {
  return countTextTokens(words.join(verbatim ? '' : ' '), LOCAL_MODEL_ENCODING);
}

const SUMMARY_QUOTES = 12;
const SUMMARY_QUOTE_CHARS = 80;
const EARLIER_SUMMARY_CHARS = 300;

/** Whether this call asks for a compaction's summary (the summary request's system text). */
export function isSummaryCall(prompt: LanguageModelV4Prompt): boolean {
  return prompt.some((message) => message.role === 'system' && isSummaryRequest(message.content));
}

/**
 * The local model's summary of a compaction (C3): deterministic and bounded, it names how many
 * messages it replaces and quotes what the person said (the last few, shortened), after the
 * start of the earlier summary. Throws for `[[fail-summary]]` in any message it summarizes.
 */
export function planSummary(prompt: LanguageModelV4Prompt): PlannedReply {
  const request = prompt.findLast((message) => message.role === 'user');
  const { previousSummary, messages } = readSummaryRequest(request ? textOf(request) : '');
  const said = messages
    .filter((message) => message.role === 'user')
    .map((message) => parseDirectives(message.text));
  if (said.some((directives) => directives.failSummary)) {
    throw new Error('The local model could not summarize, as requested by [[fail-summary]].');
  }
  const quotes = said
    .slice(-SUMMARY_QUOTES)
    .map((directives) => `"${shorten(directives.cleanText, SUMMARY_QUOTE_CHARS)}"`);
  const text = [
    ...(previousSummary ? [`Before that: ${shorten(previousSummary, EARLIER_SUMMARY_CHARS)}`] : []),
    `Summary of ${messages.length} messages.`,
    quotes.length > 0 ? `The person said: ${quotes.join(' | ')}.` : 'The person said nothing.',
  ].join(' ');
  const words = text.split(/\s+/).filter(Boolean);
  return {
    words,
    verbatim: false,
    directives: parseDirectives(''),
    inputTokens: promptTokens(prompt),
    outputTokens: tokensOf(words, false),
  };
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}
