import {
  type ChatExport,
  type DocumentAttachment,
  type ExportedMessage,
  type ImageAttachment,
  isDocumentAttachment,
  isImageAttachment,
} from '@chat/contracts';
import type { BranchRow, Queryable, ThreadRow } from '@chat/db';
import { InvariantError, notFound, threadBusy } from '../../platform/errors';
import { attachmentIdOfPart } from '../attachments/parts';
import { describeAttachments } from '../attachments/repository';
import { findThreadBranch, listBranchOrigins, listLiveBranches } from '../branches/repository';
import { feedbackOfMessages } from '../feedback/repository';
import { listNotes } from '../threads/notes';
import { transcriptTables } from '../transcript/tables';
import { listRequests } from '../turns/approval/repository';
import { readMessageMarks } from '../turns/marks';
import { type AttachmentKey, toExportedPart } from './parts';
import { listUnsettledMessageIds } from './repository';

type UIPart = { type: string; [key: string]: unknown };

/** What a new chat is made of: an export's versions, messages, notes and approvals. */
export type ChatContent = Pick<ChatExport, 'shownVersion' | 'versions' | 'messages' | 'notes' | 'approvals'>;

/**
 * A chat read for an export (or a fork): its content, and the attachment behind each image and
 * document key.
 */
export interface ChatExportSource {
  title: string;
  createdAt: Date;
  content: ChatContent;
  images: Array<{ key: string; attachment: ImageAttachment }>;
  documents: Array<{ key: string; attachment: DocumentAttachment }>;
}

/** The whole chat (an export), or the shown version up to one message (a fork, P3). */
export type ExportScope = { kind: 'chat' } | { kind: 'shownVersionUpTo'; messageId: string };

/**
 * Reads a chat as an export holds it (P1). Every live version, each read once from Mastra's table
 * in stored order and converted one message at a time (linear in the chat, never Mastra's
 * quadratic recall); a message several versions share is converted once, under its origin id,
 * and listed in each. Each version ends where the shown transcript's settled part ends (as a
 * share does): a running reply or a failed attempt waiting at the head is not final. Marks, the
 * owner's feedback, notes and decided approvals come from the API's own rows. Call it inside one
 * transaction (repeatable read) so every part of the chat is read at the same moment.
 */
export async function readChatExport(
  q: Queryable,
  thread: ThreadRow,
  ownerId: string,
  scope: ExportScope,
): Promise<ChatExportSource> {
  const branches = scope.kind === 'chat' ? versionOrder(await listLiveBranches(q, thread.id)) : [];
  if (scope.kind !== 'chat') {
    const shown = thread.activeBranchId
      ? await findThreadBranch(q, thread.id, thread.activeBranchId)
      : undefined;
    if (!shown) throw new InvariantError(`thread ${thread.id} has no active branch`);
    branches.push(shown);
  }
  const unsettled = await listUnsettledMessageIds(q, thread.id);

  const keyOfMessage = new Map<string, string>();
  const messages: Array<{ origin: string; message: ExportedMessage }> = [];
  const keyOfAttachment = new Map<string, AttachmentKey>();
  const images: ChatExportSource['images'] = [];
  const documents: ChatExportSource['documents'] = [];
  const versions: ChatContent['versions'] = [];
  const keyOfBranch = new Map(branches.map((branch, index) => [branch.id, `v${index + 1}`]));

  for (const branch of branches) {
    const [origins, stored] = await Promise.all([
      listBranchOrigins(q, branch.id),
      transcriptTables.readBranchMessages(q, branch.memoryThreadId),
    ]);
    const originOf = (id: string) => origins.get(id) ?? id;
    let end = stored.findIndex((message) => unsettled.has(originOf(message.id)));
    if (end < 0) end = stored.length;
    if (scope.kind === 'shownVersionUpTo') {
      const at = stored.findIndex(
        (message) =>
          originOf(message.id) === scope.messageId &&
          (message.role === 'user' || message.role === 'assistant'),
      );
      if (at < 0) throw notFound('message');
      if (at >= end) throw threadBusy('not_settled');
      end = at + 1;
    }
    const kept = stored.slice(0, end);
    const createdAtOf = new Map(kept.map((message) => [message.id, message.createdAt]));
    // Messages an earlier version already holds are copies here: converted once, listed again.
    const fresh = transcriptTables
      .toUIMessages(kept.filter((message) => !keyOfMessage.has(originOf(message.id))))
      .filter((message) => message.role === 'user' || message.role === 'assistant');
    const newAttachmentIds = fresh
      .flatMap((message) => (message.parts as UIPart[]).flatMap((part) => attachmentIdOfPart(part) ?? []))
      .filter((id) => !keyOfAttachment.has(id));
    // Only this chat's own images and documents go along; a reference whose file is gone is left out.
    const described = await describeAttachments(q, newAttachmentIds, thread.id);
    for (const id of newAttachmentIds) {
      const attachment = described.get(id);
      if (!attachment || keyOfAttachment.has(id)) continue;
      if (isImageAttachment(attachment)) {
        const key = `i${images.length + 1}`;
        keyOfAttachment.set(id, { image: key });
        images.push({ key, attachment });
      } else if (isDocumentAttachment(attachment)) {
        const key = `d${documents.length + 1}`;
        keyOfAttachment.set(id, { document: key });
        documents.push({ key, attachment });
      }
    }
    for (const message of fresh) {
      const origin = originOf(message.id);
      const key = `m${keyOfMessage.size + 1}`;
      keyOfMessage.set(origin, key);
      const createdAt = createdAtOf.get(message.id);
      if (!createdAt) throw new InvariantError(`message ${message.id} converted from nowhere`);
      messages.push({
        origin,
        message: {
          id: key,
          role: message.role as ExportedMessage['role'],
          createdAt: createdAt.toISOString(),
          parts: (message.parts as UIPart[]).flatMap(
            (part) => toExportedPart(part, (attachmentId) => keyOfAttachment.get(attachmentId)) ?? [],
          ),
        },
      });
    }
    const parent = branch.parentBranchId ? keyOfBranch.get(branch.parentBranchId) : undefined;
    const editOf = branch.forkMessageId ? keyOfMessage.get(branch.forkMessageId) : undefined;
    versions.push({
      id: keyOfBranch.get(branch.id) as string,
      parent: scope.kind === 'chat' ? (parent ?? null) : null,
      editOf: scope.kind === 'chat' ? (editOf ?? null) : null,
      lastShownAt: branch.lastActiveAt.toISOString(),
      messages: kept.flatMap((message) => keyOfMessage.get(originOf(message.id)) ?? []),
    });
  }

  const origins = messages.map(({ origin }) => origin);
  const [marks, feedback, notes, approvals] = await Promise.all([
    readMessageMarks(q, thread.id, origins),
    feedbackOfMessages(q, ownerId, thread.id, origins),
    scope.kind === 'chat' ? listNotes(q, thread.id) : Promise.resolve([]),
    listRequests(q, thread.id),
  ]);
  for (const { origin, message } of messages) {
    if (message.role !== 'assistant') continue;
    const mark = marks.get(origin);
    const rating = feedback.get(origin);
    if (mark?.model) message.model = mark.model;
    if (mark?.interrupted) message.interrupted = true;
    if (mark?.usage) message.usage = mark.usage;
    if (rating) message.feedback = rating;
  }
  const toolCalls = new Set(
    messages.flatMap(({ message }) =>
      message.parts.flatMap((part) => ('toolCallId' in part ? [part.toolCallId] : [])),
    ),
  );
  return {
    title: thread.title,
    createdAt: thread.createdAt,
    content: {
      shownVersion: scope.kind === 'chat' ? (keyOfBranch.get(thread.activeBranchId ?? '') ?? 'v1') : 'v1',
      versions,
      messages: messages.map(({ message }) => message),
      notes: notes.map((note) => ({ text: note.text, createdAt: note.createdAt })),
      approvals: approvals.flatMap((request) =>
        request.status !== 'pending' && toolCalls.has(request.toolCallId)
          ? [
              {
                toolCallId: request.toolCallId,
                toolName: request.toolName,
                args: request.args,
                status: request.status,
                createdAt: request.createdAt,
                decidedAt: request.decidedAt,
              },
            ]
          : [],
      ),
    },
    images,
    documents,
  };
}

/**
 * The original first, then every version after the one it was made from (by creation, a version
 * is always made after its parent; the order is fixed so an export of an import lists them the
 * same way).
 */
function versionOrder(branches: BranchRow[]): BranchRow[] {
  const byCreation = [...branches].sort(
    (a, b) =>
      Number(a.forkMessageId !== null) - Number(b.forkMessageId !== null) ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const byId = new Map(branches.map((branch) => [branch.id, branch]));
  const placed = new Set<string>();
  const ordered: BranchRow[] = [];
  const place = (branch: BranchRow) => {
    if (placed.has(branch.id)) return;
    placed.add(branch.id);
    const parent = branch.parentBranchId ? byId.get(branch.parentBranchId) : undefined;
    if (parent) place(parent);
    ordered.push(branch);
  };
  for (const branch of byCreation) place(branch);
  return ordered;
}
