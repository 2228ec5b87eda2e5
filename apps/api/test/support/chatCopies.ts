import type { Attachment, ChatExport, ThreadDetail } from '@chat/contracts';
import { type ApiClient, readChunks, readUntilWords, textOfChunks } from './client';
import { pdfBytes } from './documents';
import { pngBytes, sendWithImages, upload, uploaded } from './images';

/**
 * Helpers for the tests of exports, imports, forks and continued shares (P1-P4): a chat with a bit
 * of everything, every version of a chat's detail, and details made comparable across chats (the
 * copy has ids of its own).
 */

/**
 * A chat with an image, a tool call, an approved and a denied approval (a note saved), a reply
 * stopped part way, a Markdown reply with feedback, and a second version of the first message
 * (which keeps its image). The second version is shown.
 */
export async function richChat(client: ApiClient, title = 'Trip planning'): Promise<string> {
  const threadId = await client.createThread(title);
  const image = await uploaded(client, threadId, pngBytes(64, 48), 'map.png');
  await readChunks(await sendWithImages(client, threadId, 'look at this map [[words:5]]', [image.id]));
  await client.sendAndRead(threadId, 'what time is it [[tool:current_time]] [[words:5]]');
  await decideApproval(client, threadId, 'buy milk [[tool:save_note]] [[words:5]]', 'approve');
  await decideApproval(client, threadId, 'sell the car [[tool:save_note]] [[words:5]]', 'deny');
  const running = await client.send(threadId, 'tell me a long story [[words:400]] [[delay:20]]');
  await readUntilWords(running, 5);
  await client.json('POST', `/api/threads/${threadId}/interrupt`);
  await client.sendAndRead(threadId, 'show me formatting [[markdown]]');
  const detail = await client.detail(threadId);
  const reply = detail.messages.at(-1);
  await client.json('PUT', `/api/threads/${threadId}/messages/${reply?.id}/feedback`, {
    rating: 'up',
    comment: 'just what I wanted',
  });
  const first = detail.messages[0];
  await readChunks(
    await client.fetch('POST', `/api/threads/${threadId}/messages/${first?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'look at this map again [[words:4]]',
    }),
  );
  return threadId;
}

async function decideApproval(
  client: ApiClient,
  threadId: string,
  text: string,
  decision: 'approve' | 'deny',
): Promise<void> {
  await client.sendAndRead(threadId, text);
  const request = (await client.detail(threadId)).hitl.find((entry) => entry.status === 'pending');
  if (!request) throw new Error('no pending approval');
  await readChunks(await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, { decision }));
}

export async function exportJson(client: ApiClient, threadId: string): Promise<ChatExport> {
  const response = await client.fetch('GET', `/api/threads/${threadId}/export?format=json`);
  if (response.status !== 200) throw new Error(`export: ${response.status} ${await response.text()}`);
  return (await response.json()) as ChatExport;
}

/**
 * The detail of every version of a chat, found by following the version controls from the shown
 * one (switching to each), then switched back. The same walk over a copy visits its versions in
 * the same order.
 */
export async function everyVersion(client: ApiClient, threadId: string): Promise<ThreadDetail[]> {
  const first = await client.detail(threadId);
  const seen = new Map<string, ThreadDetail>([[first.thread.activeBranchId, first]]);
  const pending = [first];
  while (pending.length > 0) {
    const detail = pending.shift() as ThreadDetail;
    for (const message of detail.messages) {
      for (const branchId of message.metadata.version?.branchIds ?? []) {
        if (seen.has(branchId)) continue;
        const switched = await client.json<ThreadDetail>('PUT', `/api/threads/${threadId}/active-branch`, {
          branchId,
        });
        if (switched.status !== 200) throw new Error(`switch: ${switched.status}`);
        seen.set(branchId, switched.body);
        pending.push(switched.body);
      }
    }
  }
  await client.json('PUT', `/api/threads/${threadId}/active-branch`, {
    branchId: first.thread.activeBranchId,
  });
  return [...seen.values()];
}

/**
 * Details with every id replaced by its place (first seen first): message ids, branch ids in
 * version info, image URLs, approval ids; turn ids and note ids dropped. What is left is what a
 * person sees, so two chats that look the same compare equal.
 */
export function comparable(details: ThreadDetail[]): unknown[] {
  const places = new Map<string, string>();
  const place = (kind: string, id: string) => {
    const key = `${kind}:${id}`;
    if (!places.has(key))
      places.set(key, `${kind}${[...places.keys()].filter((k) => k.startsWith(kind)).length + 1}`);
    return places.get(key) as string;
  };
  // Branches first, in the order the walk found them, so version info names them the same way.
  for (const detail of details) place('branch', detail.thread.activeBranchId);
  return details.map((detail) => ({
    messages: detail.messages.map(({ id, role, parts, metadata }) => {
      const { turnId: _turnId, version, ...rest } = metadata;
      return {
        id: place('message', id),
        role,
        parts: parts.map((part) => {
          const copy: Record<string, unknown> = { ...part };
          if (part.type === 'file') copy.url = place('image', String(part.url));
          if (part.approval && typeof part.approval === 'object') {
            const { id: approvalId, ...decision } = part.approval as { id: string };
            copy.approval = { ...decision, id: place('approval', approvalId) };
          }
          return copy;
        }),
        metadata: {
          ...rest,
          ...(version
            ? {
                version: {
                  ...version,
                  branchIds: version.branchIds.map((branchId) => place('branch', branchId)),
                },
              }
            : {}),
        },
      };
    }),
    hitl: detail.hitl.map(({ id, turnId: _turnId, ...request }) => ({
      ...request,
      id: place('approval', id),
    })),
    notes: detail.notes.map(({ id: _id, ...note }) => note),
    turnQueue: detail.turnQueue,
  }));
}

/** What the local model says it read of the chat's documents (D1). */
export const DOCUMENTS_READ = 'I read 2 documents: report.pdf, 2 pages, 5 words; plan.md, 6 words.';

/**
 * A chat whose one message carries a PDF and a Markdown file (D1), answered: what a copy of it
 * must keep. Returns the chat and its two documents.
 */
export async function chatWithDocuments(
  client: ApiClient,
  title = 'Reading',
): Promise<{ threadId: string; pdf: Attachment; md: Attachment }> {
  const threadId = await client.createThread(title);
  const attach = async (bytes: Uint8Array<ArrayBuffer>, name: string) => {
    const response = await upload(client, threadId, bytes, name, 'application/octet-stream');
    if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { attachment: Attachment }).attachment;
  };
  const pdf = await attach(pdfBytes(['Alpha beta gamma', 'delta epsilon']), 'report.pdf');
  const md = await attach(new TextEncoder().encode('# Plan\n\nzeta eta theta iota\n'), 'plan.md');
  const reply = textOfChunks(
    await readChunks(await sendWithImages(client, threadId, 'summarise these', [pdf.id, md.id])),
  );
  if (!reply.includes(DOCUMENTS_READ)) throw new Error(`the documents were not read: ${reply}`);
  return { threadId, pdf, md };
}

/** The documents a chat's messages show: their names and kinds, in order. */
export function documentParts(detail: ThreadDetail): Array<{ mediaType: string; filename?: string }> {
  return detail.messages.flatMap((message) =>
    message.parts.flatMap((part) =>
      part.type === 'file' && !String(part.mediaType).startsWith('image/')
        ? [{ mediaType: String(part.mediaType), filename: part.filename as string | undefined }]
        : [],
    ),
  );
}

/**
 * What the model of a chat reads of its last message now: its last reply regenerated, as the
 * local model says it.
 */
export async function lastReplyAgain(client: ApiClient, threadId: string): Promise<string> {
  const detail = await client.detail(threadId);
  const reply = detail.messages.findLast((message) => message.role === 'assistant');
  if (!reply) throw new Error('no reply to regenerate');
  const response = await client.fetch('POST', `/api/threads/${threadId}/messages/${reply.id}/regenerate`, {
    clientRequestId: crypto.randomUUID(),
  });
  if (response.status !== 200) throw new Error(`regenerate: ${response.status} ${await response.text()}`);
  return textOfChunks(await readChunks(response));
}
