import { randomBytes } from 'node:crypto';
import {
  type Attachment,
  type DrainMode,
  type ExportedMessage,
  type ForkOrigin,
  isDocumentMediaType,
} from '@chat/contracts';
import type { Queryable, ThreadRow } from '@chat/db';
import { InvariantError } from '../../platform/errors';
import { type CheckedDocument, countPieces } from '../attachments/documentCheck';
import type { CheckedImage } from '../attachments/imageCheck';
import type { AttachmentStorage } from '../attachments/storage';
import { insertMessageOrigins } from '../branches/repository';
import { updateThread } from '../threads/repository';
import { transcriptTables } from '../transcript/tables';
import type { NewStoredMessage } from '../transcript/transcriptStore';
import { insertCopiedTurns, insertTurn } from '../turns/lifecycle';
import type { ChatContent } from './exportReader';
import { type AttachmentKey, attachmentKeyOf, storedContent } from './parts';
import {
  insertDecidedApprovals,
  insertFeedbackRows,
  insertNewChatThread,
  insertNotes,
  insertSentAttachments,
  insertVersionBranches,
} from './repository';

/** An image of a new chat: checked already, its bytes read when the chat is written. */
export interface NewChatImage extends CheckedImage {
  /** Its key in the chat's content (`file` parts name it). */
  key: string;
  readBytes(): Promise<Uint8Array>;
}

/**
 * A document of a new chat (D1): checked already (its text read from its bytes on an import,
 * copied on a fork or a continued share), its bytes and text read when the chat is written.
 */
export interface NewChatDocument extends Omit<CheckedDocument, 'text' | 'pieces'> {
  /** Its key in the chat's content (`file` parts name it). */
  key: string;
  /** Its text's pieces when its reading counted them (an import's); else counted as it is written. */
  pieces?: number;
  readBytes(): Promise<Uint8Array>;
  readText(): Promise<string>;
}

/** A new chat of `ownerId`'s: an import, a fork or a continued share (P2-P4). */
export interface NewChat {
  ownerId: string;
  title: string;
  content: ChatContent;
  images: readonly NewChatImage[];
  documents: readonly NewChatDocument[];
  forkedFrom?: ForkOrigin;
  /**
   * A person's message the new chat answers first (a fork from a user message, P3): not among its
   * messages, but queued on the shown version with its files (which `images` and `documents`
   * hold), for the caller to claim once the chat is written.
   */
  toAnswer?: ExportedMessage;
}

/**
 * Writes a new chat, whole, inside the caller's transaction: the thread, one branch and one Mastra
 * memory thread per version (a message shared by versions is stored once as itself and as a copy
 * in each later version, with its origin, ADR-010), the lineage rows, a settled turn per exchange
 * (which message is whose, a stop, the model, the attachments: what thread detail marks and the
 * next turn's handoff read), the images and documents (bytes and text, each stored once as for an
 * upload), feedback, notes and decided approvals. Memory is written with
 * SQL in the same transaction (the transcript store's tables, chats/transcript/): a failure anywhere, or a crash, leaves no
 * row of it, in the app's tables or Mastra's.
 *
 * The content is trusted: it was read from a chat, or passed `checkImport`.
 */
export async function writeNewChat(
  tx: Queryable,
  storage: AttachmentStorage,
  drainMode: DrainMode,
  chat: NewChat,
): Promise<ThreadRow> {
  const { ownerId, content } = chat;
  const thread = await insertNewChatThread(tx, {
    ownerId,
    drainMode,
    title: chat.title,
    ...(chat.forkedFrom
      ? { forkedFromThreadId: chat.forkedFrom.threadId, forkedFromMessageId: chat.forkedFrom.messageId }
      : {}),
  });

  const attachmentOfKey = new Map<string, Attachment>();
  const files = [
    ...chat.images.map((image) => ({ ...image, keyed: `image:${image.key}`, readText: undefined })),
    ...chat.documents.map((document) => ({ ...document, keyed: `document:${document.key}` })),
  ];
  const attachments = await insertSentAttachments(
    tx,
    thread.id,
    ownerId,
    files.map(({ name, mediaType, size, width, height, ...rest }) => ({
      name,
      mediaType,
      size,
      width,
      height,
      ...('pages' in rest && rest.pages !== null ? { pages: rest.pages } : {}),
      ...('words' in rest ? { words: rest.words } : {}),
    })),
  );
  for (const [index, file] of files.entries()) {
    const attachment = attachments[index] as Attachment;
    await storage.put(tx, attachment.id, await file.readBytes());
    if (file.readText && isDocumentMediaType(file.mediaType)) {
      const text = await file.readText();
      await storage.putText(tx, attachment.id, text, file.pieces ?? countPieces(file.mediaType, text));
    }
    attachmentOfKey.set(file.keyed, attachment);
  }
  const attachmentOf = (key: AttachmentKey) => {
    const keyed = 'image' in key ? `image:${key.image}` : `document:${key.document}`;
    const attachment = attachmentOfKey.get(keyed);
    if (!attachment) throw new InvariantError(`${keyed} of a new chat has no attachment`);
    return attachment;
  };

  const messageOf = new Map(content.messages.map((message) => [message.id, message]));
  const message = (key: string) => {
    const found = messageOf.get(key);
    if (!found) throw new InvariantError(`message ${key} of a new chat is not in it`);
    return found;
  };
  const branchOf = new Map(content.versions.map((version) => [version.id, crypto.randomUUID()]));

  // Each message is stored once as itself, in the first version that holds it (its owner), and
  // as a copy in every later one. Ids are made in each version's order, so messages of one time
  // keep their order in Mastra's (time, id) order.
  const nextId = orderedIds();
  const idOf = new Map<string, string>();
  const ownerOf = new Map<string, string>();
  const contentOf = new Map<string, string>();
  const memory: NewStoredMessage[] = [];
  const copies = new Map<string, Array<{ messageId: string; originId: string }>>();
  for (const version of content.versions) {
    const branchId = branchOf.get(version.id) as string;
    for (const key of version.messages) {
      const origin = idOf.get(key);
      const id = nextId();
      if (origin === undefined) {
        idOf.set(key, id);
        ownerOf.set(key, version.id);
      } else {
        const list = copies.get(branchId) ?? [];
        list.push({ messageId: id, originId: origin });
        copies.set(branchId, list);
      }
      const exported = message(key);
      let stored = contentOf.get(key);
      if (stored === undefined) {
        stored = storedContent({ ...exported, id, createdAt: new Date(exported.createdAt) }, attachmentOf);
        contentOf.set(key, stored);
      }
      memory.push({
        id,
        threadId: branchId,
        resourceId: ownerId,
        role: exported.role,
        content: stored,
        createdAt: new Date(exported.createdAt),
      });
    }
  }
  await insertVersionBranches(
    tx,
    thread.id,
    content.versions.map((version, index) => ({
      id: branchOf.get(version.id) as string,
      parentBranchId: version.parent === null ? null : (branchOf.get(version.parent) ?? null),
      // Set for every version but the original, which marks it as a version (B4 removes those):
      // the user message it replaces, or one that names nothing when that message is not in the chat.
      forkMessageId:
        index === 0
          ? null
          : ((version.editOf === null ? undefined : idOf.get(version.editOf)) ?? crypto.randomUUID()),
      lastActiveAt: new Date(version.lastShownAt),
    })),
  );
  await transcriptTables.insertConversations(tx, [...branchOf.values()], ownerId);
  await transcriptTables.insertMessages(tx, memory);
  for (const [branchId, rows] of copies) await insertMessageOrigins(tx, branchId, rows);
  for (const branchId of branchOf.values()) await transcriptTables.writeBranchLineage(tx, branchId);
  await transcriptTables.markThreadForks(tx, thread.id);

  const turnOf = await writeTurns(tx, thread.id, content, { branchOf, idOf, ownerOf, message, attachmentOf });
  await insertFeedbackRows(
    tx,
    content.messages.flatMap((exported) =>
      exported.feedback
        ? [
            {
              userId: ownerId,
              threadId: thread.id,
              messageId: idOf.get(exported.id) as string,
              rating: exported.feedback.rating,
              comment: exported.feedback.comment ?? null,
            },
          ]
        : [],
    ),
  );
  await insertNotes(
    tx,
    thread.id,
    content.notes.map((note) => ({ text: note.text, createdAt: new Date(note.createdAt) })),
  );
  const messageOfToolCall = new Map<string, string>();
  for (const exported of content.messages) {
    for (const part of exported.parts) {
      if ('toolCallId' in part && !messageOfToolCall.has(part.toolCallId))
        messageOfToolCall.set(part.toolCallId, exported.id);
    }
  }
  await insertDecidedApprovals(
    tx,
    thread.id,
    content.approvals.map((approval) => {
      const turnId = turnOf.get(messageOfToolCall.get(approval.toolCallId) ?? '');
      if (!turnId) throw new InvariantError(`approval of ${approval.toolCallId} has no turn`);
      return {
        turnId,
        toolName: approval.toolName,
        toolCallId: approval.toolCallId,
        args: approval.args,
        status: approval.status,
        createdAt: new Date(approval.createdAt),
        decidedAt: approval.decidedAt === null ? null : new Date(approval.decidedAt),
      };
    }),
  );
  const shownBranchId = branchOf.get(content.shownVersion) as string;
  if (chat.toAnswer) {
    await insertTurn(tx, 'queued', {
      threadId: thread.id,
      branchId: shownBranchId,
      clientRequestId: crypto.randomUUID(),
      text: textOf(chat.toAnswer),
      attachments: filesOf(chat.toAnswer, attachmentOf),
    });
  }
  return await updateThread(tx, thread.id, { activeBranchId: shownBranchId });
}

/** The attachments a message's file parts name, in order. */
function filesOf(message: ExportedMessage, attachmentOf: (key: AttachmentKey) => Attachment): Attachment[] {
  return message.parts.flatMap((part) => {
    const key = attachmentKeyOf(part);
    return key ? [attachmentOf(key)] : [];
  });
}

/**
 * A settled turn per exchange of each version's own messages: a user message and the replies
 * after it. Its reply (whose marks thread detail shows) is the first one with a model or a stop,
 * else the last; another marked reply in the same exchange, or a reply before any user message,
 * gets a turn of its own. Returns each message's turn, by key.
 */
async function writeTurns(
  tx: Queryable,
  threadId: string,
  content: ChatContent,
  chat: {
    branchOf: Map<string, string>;
    idOf: Map<string, string>;
    ownerOf: Map<string, string>;
    message: (key: string) => ExportedMessage;
    attachmentOf: (key: AttachmentKey) => Attachment;
  },
): Promise<Map<string, string>> {
  interface Exchange {
    id: string;
    branchId: string;
    user?: ExportedMessage;
    reply?: ExportedMessage;
  }
  const exchanges: Exchange[] = [];
  const turnOf = new Map<string, string>();
  const marked = (message: ExportedMessage | undefined) => !!(message?.model || message?.interrupted);
  for (const version of content.versions) {
    const branchId = chat.branchOf.get(version.id) as string;
    let current: Exchange | undefined;
    for (const key of version.messages) {
      if (chat.ownerOf.get(key) !== version.id) continue;
      const message = chat.message(key);
      if (message.role === 'user') {
        current = { id: crypto.randomUUID(), branchId, user: message };
        exchanges.push(current);
      } else if (!current || (marked(message) && marked(current.reply))) {
        current = { id: crypto.randomUUID(), branchId, reply: message };
        exchanges.push(current);
      } else if (!current.reply || (marked(message) && !marked(current.reply))) {
        current.reply = message;
      }
      turnOf.set(key, current.id);
    }
  }
  await insertCopiedTurns(
    tx,
    exchanges.map((exchange, index) => ({
      id: exchange.id,
      threadId,
      branchId: exchange.branchId,
      clientRequestId: `copied:${index + 1}`,
      text: exchange.user ? textOf(exchange.user) : '',
      status: exchange.reply?.interrupted ? 'interrupted' : 'completed',
      userMessageId: exchange.user ? (chat.idOf.get(exchange.user.id) ?? null) : null,
      assistantMessageId: exchange.reply ? (chat.idOf.get(exchange.reply.id) ?? null) : null,
      model: exchange.reply?.model ?? null,
      usage: exchange.reply?.usage ?? null,
      attachments: exchange.user ? filesOf(exchange.user, chat.attachmentOf) : [],
    })),
  );
  return turnOf;
}

function textOf(message: ExportedMessage): string {
  return message.parts
    .map((part) => (part.type === 'text' && 'text' in part ? part.text : ''))
    .join('')
    .trim();
}

/**
 * Message ids that sort in the order they are made (as text, under any collation: same length,
 * hex digits, dashes in the same places), shaped like a UUIDv7: the time, a counter, and random
 * bits of this chat, so two chats written in the same millisecond never share one.
 */
function orderedIds(): () => string {
  const time = Date.now().toString(16).padStart(12, '0');
  const random = randomBytes(6).toString('hex').slice(0, 11);
  let counter = 0;
  return () => {
    const count = (counter++).toString(16).padStart(7, '0');
    return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${count.slice(0, 3)}-8${count.slice(3, 6)}-${count.slice(6)}${random}`;
  };
}
