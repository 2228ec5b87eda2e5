import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { parseDocumentPrompt } from './documentPrompt';

const numbers = new Intl.NumberFormat('en-US');

/**
 * What the local model says about the documents of the last user message, from the text it
 * received (D1), so tests and QA can see what arrived and what was cut:
 * `I read 1 document: report.pdf, 12 pages, 3,400 words.` or
 * `I read 1 document: report.pdf, pages 1-40 of 120 were read, 9,800 words.` Undefined for none.
 */
export function documentSentence(prompt: LanguageModelV4Prompt): string | undefined {
  const last = prompt.filter((message) => message.role === 'user').at(-1);
  if (last?.role !== 'user') return undefined;
  const read = last.content.flatMap((part) => {
    const document = part.type === 'text' ? parseDocumentPrompt(part.text) : undefined;
    if (!document) return [];
    const words = `${numbers.format(document.text.match(/\S+/g)?.length ?? 0)} words`;
    const extent =
      document.cut ?? (document.pages === undefined ? undefined : plural(document.pages, 'page'));
    return [[document.name, extent, words].filter(Boolean).join(', ')];
  });
  if (read.length === 0) return undefined;
  return `I read ${plural(read.length, 'document')}: ${read.join('; ')}.`;
}

function plural(count: number, noun: string): string {
  return `${numbers.format(count)} ${noun}${count === 1 ? '' : 's'}`;
}
