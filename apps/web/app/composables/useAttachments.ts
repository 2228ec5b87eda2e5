import {
  type Attachment,
  type AttachmentAnswer,
  imageMediaTypes,
  isDocumentMediaType,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MAX_DOCUMENT_BYTES,
  mediaUrl,
  refusalMessages,
} from '@chat/contracts';
import { useLocalStorage } from '@vueuse/core';

/** An image or a document on its way into a message: uploading, uploaded, or refused. */
export interface PendingAttachment {
  key: string;
  name: string;
  /** What the picked file says it is (the upload's answer says what it is). */
  mediaType?: string;
  size?: number;
  /** A local preview (an object URL of the file itself): shown before the upload is done. */
  previewUrl: string;
  /** Uploaded fraction, 0 to 1. */
  progress: number;
  state: 'uploading' | 'ready' | 'error';
  attachment?: Attachment;
  error?: string;
}

const TOO_LARGE = refusalMessages.too_large.image;
const DOCUMENT_TOO_LARGE = refusalMessages.too_large.document;
const NOT_ACCEPTED = refusalMessages.unsupported_media_type.attachment;
const GONE = 'This image is no longer available; remove it and attach it again.';

/** A picked file the server would take as an image (else it may be a document, D1). */
const isImageFile = (file: File) => file.type.startsWith('image/');

/** Where the uploaded, unsent images of one composer wait across a reload. */
function storageKey(key: string): string {
  return `chat:attachments:${key}`;
}

/** The kept uploads as stored: anything else under the key (not ours, damaged) keeps nothing. */
const keptSerializer = {
  read(raw: string): Attachment[] | null {
    try {
      const kept: unknown = JSON.parse(raw);
      return Array.isArray(kept)
        ? (kept as Attachment[]).filter((item) => typeof item?.id === 'string')
        : null;
    } catch {
      return null;
    }
  },
  write: (attachments: Attachment[] | null): string => JSON.stringify(attachments ?? []),
};

/**
 * One composer's kept uploads; null (none) removes the key. Written at once (`sync`): a hand-over
 * writes another chat's key and lets go of it straight after. Storage off or full: the composer
 * still holds them for as long as the page lives, so there is nothing to report.
 */
function useKeptAttachments(key: string) {
  return useLocalStorage<Attachment[] | null>(storageKey(key), null, {
    serializer: keptSerializer,
    listenToStorageChanges: false,
    flush: 'sync',
    onError: () => {},
  });
}

/**
 * The composer's images: each file is uploaded as soon as it is picked, pasted or dropped (with
 * progress), so Send only names the uploads. The server checks the bytes; the checks here only
 * spare a person an upload that cannot succeed.
 *
 * `thread` is the chat to upload to, or, on the start page, a function that makes the chat on the
 * first image (uploads need one). Uploaded images wait in the browser's storage under `keepAs`
 * (a chat's own id by default) until they are sent, like the draft text, so a reload loses none;
 * `handOver` moves them to a chat's composer (the start page's first message goes to its chat's
 * page to be sent).
 */
export function useAttachments(thread: string | (() => Promise<string>), options: { keepAs?: string } = {}) {
  const keepAs = options.keepAs ?? (typeof thread === 'string' ? thread : null);
  const kept = keepAs ? useKeptAttachments(keepAs) : null;
  const items = ref<PendingAttachment[]>((kept?.value ?? []).map(restored));
  const requests = new Map<string, XMLHttpRequest>();

  const ready = computed(() => items.value.filter((item) => item.state === 'ready'));
  const uploading = computed(() => items.value.some((item) => item.state === 'uploading'));
  const uploaded = computed(() => ready.value.flatMap((item) => (item.attachment ? [item.attachment] : [])));

  function add(files: readonly File[]): void {
    for (const file of files) {
      const live = items.value.filter((item) => item.state !== 'error').length;
      const item: PendingAttachment = {
        key: crypto.randomUUID(),
        name: file.name || 'image',
        ...(file.type ? { mediaType: file.type } : {}),
        size: file.size,
        previewUrl: URL.createObjectURL(file),
        progress: 0,
        state: 'uploading',
      };
      if (live >= MAX_ATTACHMENTS_PER_MESSAGE) {
        fail(item, refusalMessages.too_large.images);
      } else if (isImageFile(file) && !(imageMediaTypes as readonly string[]).includes(file.type)) {
        fail(item, NOT_ACCEPTED);
      } else if (isImageFile(file) && file.size > MAX_ATTACHMENT_BYTES) {
        fail(item, TOO_LARGE);
      } else if (file.size > MAX_DOCUMENT_BYTES) {
        fail(item, DOCUMENT_TOO_LARGE);
      } else {
        items.value.push(item);
        void upload(item.key, file);
      }
    }
  }

  function fail(item: PendingAttachment, error: string): void {
    items.value.push({ ...item, state: 'error', error });
  }

  function update(key: string, changes: Partial<PendingAttachment>): void {
    const index = items.value.findIndex((item) => item.key === key);
    const current = items.value[index];
    if (current) items.value[index] = { ...current, ...changes };
  }

  /** A kept upload, shown by its media URL; one whose bytes are gone (swept) says so. */
  function restored(attachment: Attachment): PendingAttachment {
    const key = crypto.randomUUID();
    const previewUrl = mediaUrl(attachment.id);
    // An image is probed by loading it; a document is not fetched (it may be megabytes): a swept
    // one is refused by the send, which says so.
    if (!isDocumentMediaType(attachment.mediaType)) {
      const probe = new Image();
      probe.onerror = () => update(key, { state: 'error', error: GONE, attachment: undefined });
      probe.src = previewUrl;
    }
    return { key, name: attachment.name, previewUrl, progress: 1, state: 'ready', attachment };
  }

  function persist(): void {
    if (kept) kept.value = uploaded.value.length ? [...uploaded.value] : null;
  }

  /** The chat to upload to: the given one, or the one the start page makes for its first image. */
  async function threadIdForUpload(): Promise<string> {
    return typeof thread === 'string' ? thread : await thread();
  }

  /** XMLHttpRequest, not fetch: only it reports upload progress. */
  async function upload(key: string, file: File): Promise<void> {
    let threadId: string;
    try {
      threadId = await threadIdForUpload();
    } catch (cause) {
      update(key, {
        state: 'error',
        error: `The file could not be uploaded: ${ApiRequestError.fromUnknown(cause).message}`,
      });
      return;
    }
    // Removed while the chat was being made.
    if (!items.value.some((item) => item.key === key)) return;
    const request = new XMLHttpRequest();
    requests.set(key, request);
    request.open('POST', `/api/threads/${encodeURIComponent(threadId)}/attachments`);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) update(key, { progress: event.loaded / event.total });
    };
    request.onload = () => {
      requests.delete(key);
      if (request.status === 201) {
        const { attachment } = JSON.parse(request.responseText) as AttachmentAnswer;
        update(key, { state: 'ready', progress: 1, attachment });
        persist();
      } else {
        update(key, { state: 'error', error: refusalOf(request) });
      }
    };
    request.onerror = () => {
      requests.delete(key);
      update(key, { state: 'error', error: 'The file could not be uploaded. Check the connection.' });
    };
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  }

  /** Takes an image out of the composer (and out of what a reload brings back). */
  function remove(key: string): void {
    drop(key);
    persist();
  }

  function drop(key: string): void {
    requests.get(key)?.abort();
    requests.delete(key);
    const item = items.value.find((candidate) => candidate.key === key);
    if (item?.previewUrl.startsWith('blob:')) URL.revokeObjectURL(item.previewUrl);
    items.value = items.value.filter((candidate) => candidate.key !== key);
  }

  /**
   * After a send: the images that went with it leave the composer. Only those: others may have
   * been added while the send was on its way.
   */
  function forget(sent: readonly Attachment[]): void {
    const ids = new Set(sent.map((attachment) => attachment.id));
    for (const item of items.value) if (item.attachment && ids.has(item.attachment.id)) drop(item.key);
    persist();
  }

  /** Moves the uploaded images to chat `threadId`'s composer, where its page finds them. */
  function handOver(threadId: string): void {
    // Under the other chat's key, where its page reads them; the scope ends the ref's watcher.
    const scope = effectScope(true);
    scope.run(() => {
      const theirs = useKeptAttachments(threadId);
      theirs.value = uploaded.value.length ? [...uploaded.value] : null;
    });
    scope.stop();
    for (const item of items.value) drop(item.key);
    persist();
  }

  // Leaving the page ends uploads on their way; the uploaded ones stay kept for the next visit.
  onScopeDispose(() => {
    for (const item of items.value) drop(item.key);
  });

  return { items, uploaded, uploading, add, remove, forget, handOver };
}

function refusalOf(request: XMLHttpRequest): string {
  try {
    const body = JSON.parse(request.responseText) as { error?: { message?: string } };
    if (body.error?.message) return body.error.message;
  } catch {
    // Not JSON: say what happened in general.
  }
  // The server's words say which bound or why a PDF could not be read; without them, the general one.
  if (request.status === 413) return TOO_LARGE;
  if (request.status === 415) return NOT_ACCEPTED;
  return `The file could not be uploaded (${request.status}).`;
}

/** The files of a paste or a drop (a text paste has none); `add` says why one is refused. */
export function filesOf(data: DataTransfer | null): File[] {
  return [...(data?.files ?? [])];
}

/**
 * Uploads one image for a message of `threadId` in one request (no progress: an undo sends again
 * images the person already sent once).
 */
export async function uploadAttachment(threadId: string, image: Blob, name: string): Promise<Attachment> {
  const form = new FormData();
  form.append('file', image, name);
  const answer = await apiJson<AttachmentAnswer>(`/api/threads/${encodeURIComponent(threadId)}/attachments`, {
    method: 'POST',
    body: form,
  });
  return answer.attachment;
}
