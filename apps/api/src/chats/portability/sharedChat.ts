import {
  type ExportedMessage,
  type ExportedPart,
  isDocumentMediaType,
  type SharedMessage,
  type SharedPart,
} from '@chat/contracts';
import type { ChatContent } from './exportReader';
import type { AttachmentKey } from './parts';

/**
 * An image or a document a continued share shows: the shared chat's attachment, copied into the
 * new chat (a document with its text).
 */
export interface SharedFile {
  key: AttachmentKey;
  attachmentId: string;
}

const SHARED_MEDIA = /^\/api\/shares\/[^/]+\/media\/([0-9a-f-]{36})$/i;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * A share's snapshot as a new chat's content (P4): one version with the snapshot's messages, as
 * the share page shows them. The snapshot holds only its allow-list (H1: text, finished tool
 * results, images, times), so that is all a continued chat can hold: nothing of the owner's
 * chat, its versions, marks, feedback or approvals. A tool result becomes a finished call again
 * (its input was never shared); an image or a document names the shared chat's attachment, whose
 * bytes (and a document's text) the new chat gets a copy of.
 */
export function sharedChatContent(
  snapshot: { createdAt: Date; messages: readonly SharedMessage[] },
  lastShownAt: Date,
): { content: ChatContent; files: SharedFile[] } {
  const files: SharedFile[] = [];
  const keyOfFile = new Map<string, AttachmentKey>();
  let images = 0;
  let documents = 0;
  const messages: ExportedMessage[] = [];
  let time = snapshot.createdAt.getTime();
  snapshot.messages.forEach((shared, index) => {
    // Oldest first, as memory orders them; a message without a time takes the one before it.
    if (messages.length === 0 && shared.createdAt) time = Date.parse(shared.createdAt);
    else if (shared.createdAt) time = Math.max(time, Date.parse(shared.createdAt));
    const parts = shared.parts.flatMap((part, position): ExportedPart[] => {
      const converted = partOf(part, `shared-${index + 1}-${position + 1}`, (attachmentId, document) => {
        let key = keyOfFile.get(attachmentId);
        if (!key) {
          key = document ? { document: `d${++documents}` } : { image: `i${++images}` };
          keyOfFile.set(attachmentId, key);
          files.push({ key, attachmentId });
        }
        return key;
      });
      return converted ? [converted] : [];
    });
    messages.push({ id: `m${index + 1}`, role: shared.role, createdAt: new Date(time).toISOString(), parts });
  });
  return {
    content: {
      shownVersion: 'v1',
      versions: [
        {
          id: 'v1',
          parent: null,
          editOf: null,
          lastShownAt: lastShownAt.toISOString(),
          messages: messages.map((message) => message.id),
        },
      ],
      messages,
      notes: [],
      approvals: [],
    },
    files,
  };
}

function partOf(
  part: SharedPart,
  toolCallId: string,
  fileKey: (attachmentId: string, document: boolean) => AttachmentKey,
): ExportedPart | null {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'file': {
      const attachmentId = SHARED_MEDIA.exec(part.url)?.[1];
      if (!attachmentId) return null;
      return {
        type: 'file',
        mediaType: part.mediaType,
        ...fileKey(attachmentId, isDocumentMediaType(part.mediaType)),
        ...(part.filename === undefined ? {} : { filename: part.filename }),
      } as Extract<ExportedPart, { type: 'file' }>;
    }
    case 'tool-result':
      if (!TOOL_NAME.test(part.toolName)) return null;
      return {
        type: `tool-${part.toolName}`,
        toolCallId,
        state: 'output-available',
        input: {},
        output: part.output,
      };
  }
}
