/**
 * The words of compaction (C3): what the model is asked when the older part of a branch is
 * summarized, and how the summary reaches later model calls (a hidden system message, never
 * stored in the transcript). The hidden handoff and steer reminders are system messages of one
 * call and never stored, so they are never among the messages summarized.
 */

const REQUEST_FIRST_LINE = 'Context compaction:';

export const SUMMARY_INSTRUCTION = [
  REQUEST_FIRST_LINE,
  '- Summarize the conversation below for yourself, so you can continue it without the messages it replaces.',
  '- Keep what the person asked for, decisions made, facts, names, numbers and open questions. Leave out pleasantries.',
  '- Write at most 300 words, in the language of the conversation. Reply with the summary only.',
].join('\n');

const REQUEST_MARKER = /(^|\n)[ \t]*Context compaction:/;

/** Whether a system text is the summary request (the local model answers it with its own summary). */
export function isSummaryRequest(text: string): boolean {
  return REQUEST_MARKER.test(text);
}

/** One message of the part being summarized, as plain text. */
export interface SummarySource {
  role: string;
  text: string;
}

/** The summary request's one user message: the earlier summary, then the messages it adds. */
export function summaryRequestText(previousSummary: string | null, messages: SummarySource[]): string {
  return [
    ...(previousSummary ? [`<earlier-summary>${previousSummary}</earlier-summary>`] : []),
    ...messages.map((message) => `<message role="${message.role}">${message.text}</message>`),
  ].join('\n');
}

const MESSAGE = /<message role="([a-z]+)">([\s\S]*?)<\/message>/g;
const EARLIER = /<earlier-summary>([\s\S]*?)<\/earlier-summary>/;

/** The parts of a summary request's text (for the local model). */
export function readSummaryRequest(text: string): {
  previousSummary: string | null;
  messages: SummarySource[];
} {
  return {
    previousSummary: EARLIER.exec(text)?.[1] ?? null,
    messages: [...text.matchAll(MESSAGE)].map((match) => ({ role: match[1] ?? '', text: match[2] ?? '' })),
  };
}

const SUMMARY_FIRST_LINE = 'Summary of the earlier conversation:';

/** The hidden system text a model call gets in place of the summarized messages. */
export function summaryForModel(summary: string): string {
  return `${SUMMARY_FIRST_LINE}\n- The messages before the ones you see were summarized; the summary follows.\n${summary}`;
}

const SUMMARY_MARKER = /(^|\n)[ \t]*Summary of the earlier conversation:\n[^\n]*\n/;

/** The summary a system text holds, or undefined when it holds none. */
export function readSummaryForModel(text: string): string | undefined {
  const match = SUMMARY_MARKER.exec(text);
  if (!match) return undefined;
  const rest = text.slice(match.index + match[0].length);
  // A caller may merge other hidden instructions after it; they start with their own first line.
  return rest.split(/\n(?=Interrupt handoff:|Steer reminder:)/)[0]?.trim();
}
