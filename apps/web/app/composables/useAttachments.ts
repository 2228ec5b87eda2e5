import {
  type Attachment,
  type AttachmentAnswer,
  attachmentMediaTypes,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  refusalMessages,
} from '@chat/contracts';

/** An image on its way into a message: uploading, uploaded, or refused. */
export interface PendingAttachment {
  key: string;
  name: string;
  /** A local preview (an object URL of the file itself): shown before the upload is done. */
  previewUrl: string;
  /** Uploaded fraction, 0 to 1. */
  progress: number;
  state: 'uploading' | 'ready' | 'error';
  attachment?: Attachment;
  error?: string;
}

const TOO_LARGE = refusalMessages.too_large.image;
const NOT_AN_IMAGE = refusalMessages.unsupported_media_type.image;

/**
 * The composer's images: each file is uploaded as soon as it is picked, pasted or dropped (with
 * progress), so Send only names the uploads. The server checks the bytes; the checks here only
 * spare a person an upload that cannot succeed.
 */
export function useAttachments(threadId: string) {
  const items = ref<PendingAttachment[]>([]);
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
        previewUrl: URL.createObjectURL(file),
        progress: 0,
        state: 'uploading',
      };
      if (live >= MAX_ATTACHMENTS_PER_MESSAGE) {
        fail(item, refusalMessages.too_large.images);
      } else if (file.type && !(attachmentMediaTypes as readonly string[]).includes(file.type)) {
        fail(item, NOT_AN_IMAGE);
      } else if (file.size > MAX_ATTACHMENT_BYTES) {
        fail(item, TOO_LARGE);
      } else {
        items.value.push(item);
        upload(item.key, file);
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

  /** XMLHttpRequest, not fetch: only it reports upload progress. */
  function upload(key: string, file: File): void {
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
      } else {
        update(key, { state: 'error', error: refusalOf(request) });
      }
    };
    request.onerror = () => {
      requests.delete(key);
      update(key, { state: 'error', error: 'The image could not be uploaded. Check the connection.' });
    };
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  }

  function remove(key: string): void {
    requests.get(key)?.abort();
    requests.delete(key);
    const item = items.value.find((candidate) => candidate.key === key);
    if (item) URL.revokeObjectURL(item.previewUrl);
    items.value = items.value.filter((candidate) => candidate.key !== key);
  }

  /**
   * After a send: the images that went with it leave the composer. Only those: others may have
   * been added while the send was on its way.
   */
  function forget(sent: readonly Attachment[]): void {
    const ids = new Set(sent.map((attachment) => attachment.id));
    for (const item of items.value) if (item.attachment && ids.has(item.attachment.id)) remove(item.key);
  }

  onScopeDispose(() => {
    for (const item of items.value) remove(item.key);
  });

  return { items, uploaded, uploading, add, remove, forget };
}

function refusalOf(request: XMLHttpRequest): string {
  if (request.status === 413) return TOO_LARGE;
  if (request.status === 415) return NOT_AN_IMAGE;
  try {
    const body = JSON.parse(request.responseText) as { error?: { message?: string } };
    if (body.error?.message) return body.error.message;
  } catch {
    // Not JSON: say what happened in general.
  }
  return `The image could not be uploaded (${request.status}).`;
}

/** The files of a paste or a drop (a text paste has none); `add` says why one is refused. */
export function filesOf(data: DataTransfer | null): File[] {
  return [...(data?.files ?? [])];
}
