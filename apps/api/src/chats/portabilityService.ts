import {
  type ChatExport,
  type DrainMode,
  type ExportFormat,
  isDocumentAttachment,
  isImageAttachment,
  type SharedMessage,
  type Thread,
} from '@chat/contracts';
import type { Database } from '@chat/db';
import { ApiError, notFound } from '../platform/errors';
import { type DocumentReader, ReadBudget } from './attachments/documentText';
import { describeAttachments } from './attachments/repository';
import type { AttachmentStorage } from './attachments/storage';
import {
  type NewChat,
  type NewChatDocument,
  type NewChatImage,
  writeNewChat,
} from './portability/chatWriter';
import { type ChatContent, type ChatExportSource, readChatExport } from './portability/exportReader';
import { checkImport } from './portability/importChecks';
import { chatExportStream } from './portability/jsonExport';
import { chatMarkdown } from './portability/markdown';
import { sharedChatContent } from './portability/sharedChat';
import { findShare } from './shares/repository';
import { isShareTokenShape } from './shares/snapshot';
import { toThread } from './threadService';
import { requireOwnedThread } from './threads/repository';
import type { HeadClaims } from './turns/claim/headClaim';

export interface PortabilityServiceDeps {
  db: Database;
  /** `AUTH_ALLOW_GUESTS`: when off, a guest's share links answer nothing (`findShare`). */
  allowGuests: boolean;
  storage: AttachmentStorage;
  /** Who runs a new chat's queue (`QUEUE_DRAIN`, Q15): an import, a fork or a continued share is new. */
  newChatDrainMode: DrainMode;
  /** How an imported document's text is read: as at an upload (D1). */
  reader: DocumentReader;
  /** Reading time one import's documents may take together. */
  importReadMs: number;
  /** Starts the answer to the person's message a fork ends with (P3), as a viewer's claim would. */
  claims: HeadClaims;
}

/** A chat as a file to download. */
export interface ChatDownload {
  filename: string;
  contentType: string;
  body: string | ReadableStream<Uint8Array>;
}

/** Reading a chat happens at one moment (every version, mark and note as they were together). */
const SNAPSHOT = { isolationLevel: 'repeatable read', accessMode: 'read only' } as const;

/**
 * Taking a chat anywhere (P1-P4, ADR-022): export it as Markdown or as a JSON file of the
 * versioned format, import such a file as a new chat, start a new chat from a message of one's own
 * ("New chat from here"), or continue a shared snapshot as one's own. Each new chat is written
 * whole or not at all (`portability/chatWriter.ts`), and the chat it came from is only read.
 */
export class PortabilityService {
  constructor(private readonly deps: PortabilityServiceDeps) {}

  async exportChat(ownerId: string, threadId: string, format: ExportFormat): Promise<ChatDownload> {
    const source = await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId);
      return await readChatExport(tx, thread, ownerId, { kind: 'chat' });
    }, SNAPSHOT);
    const exportedAt = new Date();
    if (format === 'md') {
      return {
        filename: `${fileStem(source.title)}.md`,
        contentType: 'text/markdown; charset=utf-8',
        body: chatMarkdown(source, exportedAt),
      };
    }
    return {
      filename: `${fileStem(source.title)}.chat.json`,
      contentType: 'application/json; charset=utf-8',
      body: chatExportStream(source, exportedAt, (attachmentId) => this.deps.storage.get(attachmentId)),
    };
  }

  /**
   * P2: a JSON export as a new chat of the importer's, every version and the shown one as exported.
   * Its documents are read within one reading-time budget, and when `signal` aborts (the request is
   * gone) the reading stops and nothing is written.
   */
  async importChat(ownerId: string, document: ChatExport, signal?: AbortSignal): Promise<Thread> {
    const budget = new ReadBudget(this.deps.importReadMs);
    const { images, documents } = await checkImport(document, (kind, bytes) =>
      this.deps.reader.read(ownerId, kind, bytes, { signal, budget }),
    );
    signal?.throwIfAborted();
    return await this.write({
      ownerId,
      title: copyTitle(document.chat.title),
      content: {
        shownVersion: document.shownVersion,
        versions: document.versions,
        messages: document.messages,
        notes: document.notes,
        approvals: document.approvals,
      },
      images,
      documents,
    });
  }

  /**
   * P3: a new chat ("Copy of" the source's title) holding the shown version up to `messageId`
   * (included), with its marks, images, documents and the owner's feedback, and a link back to
   * where it came from. The source is only read. From a person's message, the copy answers it:
   * the message is sent in the new chat (its files with it) and starts at once, on the server, so
   * the copy never waits with a question nobody answers.
   */
  async fork(ownerId: string, threadId: string, messageId: string): Promise<Thread> {
    const row = await this.deps.db.transaction(
      async (tx) => {
        const thread = await requireOwnedThread(tx, threadId, ownerId);
        const source = await readChatExport(tx, thread, ownerId, { kind: 'shownVersionUpTo', messageId });
        return await writeNewChat(tx, this.deps.storage, this.deps.newChatDrainMode, {
          ownerId,
          title: copyTitle(source.title),
          ...withLastQuestionToAnswer(source.content),
          images: this.copiedImages(source.images),
          documents: this.copiedDocuments(source.documents),
          forkedFrom: { threadId, messageId },
        });
      },
      { isolationLevel: 'repeatable read' },
    );
    const copy = toThread(row);
    // The question waits at the head of the copy's queue; claimed here, it runs whether or not a
    // page opens. A refusal (the account's running cap) leaves it there for the page to claim.
    await this.deps.claims.claim(ownerId, copy.id).catch((error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
    });
    return copy;
  }

  /**
   * P4: a share's snapshot as a new chat of the caller's (signed in or a guest). The shared chat is
   * only read, and nothing about who continued it is written anywhere its owner could see.
   */
  async continueShare(userId: string, token: string): Promise<Thread> {
    const share = isShareTokenShape(token)
      ? await findShare(this.deps.db, token, { guestOwners: this.deps.allowGuests })
      : undefined;
    if (!share) throw notFound('share');
    const { content, files } = sharedChatContent(
      { createdAt: share.createdAt, messages: share.messages as SharedMessage[] },
      new Date(),
    );
    // Only the shared chat's own images and documents, and only those still there.
    const described = await describeAttachments(
      this.deps.db,
      files.map((file) => file.attachmentId),
      share.threadId,
    );
    const images: ChatExportSource['images'] = [];
    const documents: ChatExportSource['documents'] = [];
    for (const { key, attachmentId } of files) {
      const attachment = described.get(attachmentId);
      if (!attachment) continue;
      if ('image' in key && isImageAttachment(attachment)) images.push({ key: key.image, attachment });
      if ('document' in key && isDocumentAttachment(attachment))
        documents.push({ key: key.document, attachment });
    }
    const keptImages = new Set(images.map((image) => image.key));
    const keptDocuments = new Set(documents.map((document) => document.key));
    return await this.write({
      ownerId: userId,
      title: copyTitle(share.title),
      content: {
        ...content,
        messages: content.messages.map((message) => ({
          ...message,
          parts: message.parts.filter(
            (part) =>
              ('image' in part ? keptImages.has(part.image) : true) &&
              ('document' in part ? keptDocuments.has(part.document) : true),
          ),
        })),
      },
      images: this.copiedImages(images),
      documents: this.copiedDocuments(documents),
    });
  }

  private async write(chat: NewChat): Promise<Thread> {
    return toThread(
      await this.deps.db.transaction((tx) =>
        writeNewChat(tx, this.deps.storage, this.deps.newChatDrainMode, chat),
      ),
    );
  }

  /** Images of an existing chat, copied into the new one (its own rows, so either chat can go). */
  private copiedImages(images: ChatExportSource['images']): NewChatImage[] {
    return images.map(({ key, attachment }) => ({
      key,
      name: attachment.name,
      mediaType: attachment.mediaType,
      size: attachment.size,
      width: attachment.width,
      height: attachment.height,
      readBytes: () => storedBytes(this.deps.storage, attachment.id, 'image'),
    }));
  }

  /**
   * Documents of an existing chat, copied into the new one with their text (D1): read as stored,
   * never extracted again.
   */
  private copiedDocuments(documents: ChatExportSource['documents']): NewChatDocument[] {
    return documents.map(({ key, attachment }) => ({
      key,
      name: attachment.name,
      mediaType: attachment.mediaType,
      size: attachment.size,
      width: 0,
      height: 0,
      pages: attachment.pages ?? null,
      words: attachment.words ?? 0,
      readBytes: () => storedBytes(this.deps.storage, attachment.id, 'attachment'),
      readText: () => storedText(this.deps.storage, attachment.id),
    }));
  }
}

/** A file's bytes as stored, for a copy of it (`what` names it in the 404 when they are gone). */
async function storedBytes(
  storage: AttachmentStorage,
  attachmentId: string,
  what: Parameters<typeof notFound>[0],
): Promise<Uint8Array> {
  const bytes = await storage.get(attachmentId);
  if (!bytes) throw notFound(what);
  return bytes;
}

/** A document's extracted text as stored, for a copy of it. */
async function storedText(storage: AttachmentStorage, attachmentId: string): Promise<string> {
  const text = (await storage.getTexts([attachmentId])).get(attachmentId);
  if (text === undefined) throw notFound('attachment');
  return text;
}

/**
 * A fork's content, and the person's message it ends with as the one to answer (left out of its
 * messages: the answering turn sends it again), when it ends with one.
 */
function withLastQuestionToAnswer(content: ChatContent): Pick<NewChat, 'content' | 'toAnswer'> {
  const version = content.versions.find((candidate) => candidate.id === content.shownVersion);
  const lastKey = version?.messages.at(-1);
  const last = content.messages.find((message) => message.id === lastKey);
  if (!version || last?.role !== 'user') return { content };
  return {
    content: {
      ...content,
      versions: content.versions.map((candidate) =>
        candidate === version ? { ...candidate, messages: candidate.messages.slice(0, -1) } : candidate,
      ),
      messages: content.messages.filter((message) => message !== last),
    },
    toAnswer: last,
  };
}

/**
 * The title of a chat made from another (an import, a fork, a continued share): told apart from its
 * source at a glance in the list, where the two often sit side by side (a fork's link back, or the
 * chat itself, says which one).
 */
function copyTitle(title: string): string {
  return `Copy of ${title}`.slice(0, 200);
}

/** A file name for a chat's title: letters, digits, spaces as dashes; `chat` when nothing is left. */
function fileStem(title: string): string {
  const stem = title
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .trim()
    .replace(/\s+/g, '-')
    .slice(0, 80);
  return stem || 'chat';
}
