import { documentDetail, type ExportedPart } from '@chat/contracts';
import type { ChatExportSource } from './exportReader';

/**
 * A chat as Markdown (P1): the version shown, to read or paste into notes. Each message under a
 * heading that says who wrote it and when, with a reply's model and whether it was stopped; the
 * text as written (replies are Markdown already); tool calls as one line each, a result in a code
 * block. Notes close it. It reads on its own, anywhere: images and documents are named (kind and
 * size or pages), not linked (a link into the app answers only its signed-in owner, and nowhere
 * else), and a line under the title says the JSON export holds the files themselves.
 */
export function chatMarkdown(source: ChatExportSource, exportedAt: Date): string {
  const { content } = source;
  const version = content.versions.find((candidate) => candidate.id === content.shownVersion);
  const byKey = new Map(content.messages.map((message) => [message.id, message]));
  const files: FileNames = {
    images: new Map(source.images.map(({ key, attachment }) => [key, imageName(attachment)])),
    documents: new Map(
      source.documents.map(({ key, attachment }) => [
        key,
        `${plain(attachment.name)} (${documentDetail(attachment)})`,
      ]),
    ),
  };
  const shown = (version?.messages ?? []).flatMap((key) => byKey.get(key) ?? []);
  const versions = content.versions.length;
  const blocks: string[] = [
    `# ${oneLine(source.title)}`,
    `Exported ${when(exportedAt)}${versions > 1 ? ` · the version shown (the chat has ${versions} versions)` : ''}`,
  ];
  if (shown.some((message) => message.parts.some((part) => 'image' in part || 'document' in part)))
    blocks.push(FILES_NOTE);
  for (const message of shown) {
    const who =
      message.role === 'user'
        ? 'You'
        : ['Assistant', message.model, message.interrupted ? 'stopped' : undefined]
            .filter(Boolean)
            .join(' · ');
    blocks.push('---', `### ${who} · ${when(new Date(message.createdAt))}`);
    for (const part of message.parts) {
      const block = partMarkdown(part, files);
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

/** Under the title of an export with images or documents: where the files themselves are. */
const FILES_NOTE =
  '_Images and documents are named here, not included: the JSON export of this chat holds them._';

/** What an export's images and documents are called in it, by their keys. */
interface FileNames {
  images: Map<string, string>;
  documents: Map<string, string>;
}

/** `map.png (PNG, 640×480)`. */
function imageName(image: { name: string; mediaType: string; width: number; height: number }): string {
  const kind = image.mediaType.replace(/^image\//, '').toUpperCase();
  return `${plain(image.name)} (${kind}, ${image.width}×${image.height})`;
}

function partMarkdown(part: ExportedPart, files: FileNames): string | null {
  if (part.type === 'text') return part.text;
  if ('document' in part) {
    const name = files.documents.get(part.document);
    return name ? `_Attached: ${name}_` : null;
  }
  if ('image' in part) {
    const name = files.images.get(part.image);
    return name ? `_Image: ${name}_` : null;
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

/** A file's name as plain text in Markdown: its marks (`*`, `_`, brackets, ...) escaped. */
function plain(name: string): string {
  return oneLine(name).replace(/[\\`*_[\]<>#|]/g, '\\$&');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `2026-12-01 17:10 UTC`: the same for every reader, wherever they are. */
function when(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
