import { type ExportedPart, mediaUrl } from '@chat/contracts';
import type { ChatExportSource } from './exportReader';

/**
 * A chat as Markdown (P1): the version shown, to read or paste into notes. Each message under a
 * heading that says who wrote it and when, with a reply's model and whether it was stopped; the
 * text as written (replies are Markdown already); images and documents as links the owner can
 * open while signed in; tool calls as one line each, a result in a code block. Notes close it.
 */
export function chatMarkdown(source: ChatExportSource, webOrigin: string, exportedAt: Date): string {
  const { content } = source;
  const version = content.versions.find((candidate) => candidate.id === content.shownVersion);
  const byKey = new Map(content.messages.map((message) => [message.id, message]));
  const imageUrl = new Map(
    source.images.map(({ key, attachment }) => [key, new URL(mediaUrl(attachment.id), webOrigin).href]),
  );
  const documentUrl = new Map(
    source.documents.map(({ key, attachment }) => [key, new URL(mediaUrl(attachment.id), webOrigin).href]),
  );
  const versions = content.versions.length;
  const blocks: string[] = [
    `# ${oneLine(source.title)}`,
    `Exported ${when(exportedAt)}${versions > 1 ? ` · the version shown (the chat has ${versions} versions)` : ''}`,
  ];
  for (const key of version?.messages ?? []) {
    const message = byKey.get(key);
    if (!message) continue;
    const who =
      message.role === 'user'
        ? 'You'
        : ['Assistant', message.model, message.interrupted ? 'stopped' : undefined]
            .filter(Boolean)
            .join(' · ');
    blocks.push('---', `### ${who} · ${when(new Date(message.createdAt))}`);
    for (const part of message.parts) {
      const block = partMarkdown(part, imageUrl, documentUrl);
      if (block) blocks.push(block);
    }
  }
  if (content.notes.length > 0) {
    blocks.push(
      '---',
      '## Notes',
      content.notes.map((note) => `- ${oneLine(note.text)} (${when(new Date(note.createdAt))})`).join('\n'),
    );
  }
  return `${blocks.join('\n\n')}\n`;
}

function partMarkdown(
  part: ExportedPart,
  imageUrl: Map<string, string>,
  documentUrl: Map<string, string>,
): string | null {
  if (part.type === 'text') return part.text;
  if ('document' in part) {
    const url = documentUrl.get(part.document);
    const label = (part.filename ?? 'document').replace(/[[\]\\]/g, '');
    return url ? `Attached: [${label}](<${url}>)` : null;
  }
  if ('image' in part) {
    const url = imageUrl.get(part.image);
    const label = (part.filename ?? 'image').replace(/[[\]\\]/g, '');
    return url ? `![${label}](<${url}>)` : null;
  }
  if (part.type === 'source-url' && 'url' in part) return `Source: <${part.url}>`;
  if (!('toolCallId' in part)) return null;
  const tool = `\`${'toolName' in part ? part.toolName : part.type.slice('tool-'.length)}\``;
  switch (part.state) {
    case 'output-available':
      return `> Tool ${tool} returned:\n\n${fenced(JSON.stringify(part.output ?? null, null, 2), 'json')}`;
    case 'output-error':
      return `> Tool ${tool} failed: ${oneLine(part.errorText ?? '')}`;
    case 'output-denied':
      return `> Tool ${tool} was not run: it was denied or stopped.`;
    default:
      return `> Tool ${tool} was called.`;
  }
}

/** A code block whose fence is longer than any run of backticks inside it. */
function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `2026-12-01 17:10 UTC`: the same for every reader, wherever they are. */
function when(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
