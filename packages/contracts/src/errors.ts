import { imageMediaTypes } from './attachments';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_PAGES,
  MAX_FEEDBACK_COMMENT_LENGTH,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  MAX_IMPORT_BYTES,
  MAX_JSON_DEPTH,
  MAX_TEXT_LENGTH,
} from './limits';

/**
 * Every code a refusal can carry, the status it comes with, and every word a person reads about it:
 * the API and the web app's proxy take their messages from here, and the web app shows the same
 * words when it explains a state before the server would refuse it.
 */

/** Stable error codes of the HTTP contract. Clients switch on these, never on messages. */
export const errorCodes = [
  'bad_request',
  'not_found',
  'method_not_allowed',
  'unauthorized',
  'invalid_credentials',
  'email_taken',
  'guests_disabled',
  'sign_up_disabled',
  'forbidden_origin',
  'queue_full',
  'not_queue_head',
  'not_queued',
  'not_eligible',
  'thread_busy',
  'not_latest_turn',
  'already_decided',
  'too_large',
  'unsupported_media_type',
  'rate_limited',
  'unavailable',
  /** A fault on the server (a bug): never the client's doing, never a refusal of bad input. */
  'internal',
  'overloaded',
  /** A capability this deployment or account does not have (agent chats off, a guest). */
  'forbidden',
  /** A1: an agent chat's directory outside its workspace, a symlink out of it, or no directory. */
  'workspace_refused',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** The body of every refusal. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; [detail: string]: unknown };
}

/**
 * One row per code: its HTTP status and the default words a person reads. The API sends these
 * unless a throw site has something more precise to say; the web app shows them for codes it
 * cannot explain better from its own state.
 */
export const errorTable: Record<ErrorCode, { status: number; message: string }> = {
  bad_request: { status: 400, message: 'The request is not valid.' },
  unauthorized: { status: 401, message: 'Sign in first.' },
  // One message for a wrong password and an unknown email: a refusal never tells which.
  invalid_credentials: { status: 401, message: 'Wrong email or password.' },
  email_taken: { status: 409, message: 'An account with this email already exists. Sign in instead.' },
  guests_disabled: { status: 403, message: 'This server needs an account: sign in or sign up.' },
  sign_up_disabled: {
    status: 403,
    message: 'This server does not take new accounts. Sign in with an existing one.',
  },
  forbidden_origin: { status: 403, message: 'This request did not come from the app.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed here.' },
  queue_full: {
    status: 409,
    message: 'The queue is full. Wait for a reply, or remove a queued message.',
  },
  not_queue_head: { status: 409, message: 'Only the first queued message can be sent now.' },
  not_queued: { status: 409, message: 'This message is no longer in the queue.' },
  not_eligible: { status: 409, message: 'The queue cannot run its next message right now.' },
  thread_busy: {
    status: 409,
    message: 'Wait until nothing is running or queued before changing versions.',
  },
  not_latest_turn: { status: 409, message: 'Only the latest message can be deleted.' },
  already_decided: { status: 409, message: 'This request was already decided.' },
  too_large: { status: 413, message: 'That is too large.' },
  unsupported_media_type: { status: 415, message: 'This kind of content is not accepted.' },
  rate_limited: { status: 429, message: 'Too many requests. Wait a moment and try again.' },
  unavailable: { status: 503, message: 'The service is briefly unavailable. Try again shortly.' },
  internal: { status: 500, message: 'Something went wrong on the server.' },
  overloaded: { status: 503, message: 'The server is busy. Try again in a moment.' },
  forbidden: { status: 403, message: 'This server or account does not allow that.' },
  workspace_refused: {
    status: 422,
    message: 'That directory is not one agent chats may work in here.',
  },
};

/** The default message of a code. */
export function errorMessage(code: ErrorCode): string {
  return errorTable[code].message;
}

/** Why the queue head cannot be claimed right now (`409 not_eligible`, with `reason`). */
export const notEligibleMessages = {
  turn_active: 'A turn is already running.',
  queue_empty: 'The queue is empty.',
  head_failed: 'The first queued message failed; retry, edit or delete it first.',
  hitl_pending: 'The reply waits for a tool approval; approve or deny it first.',
  queue_paused: 'The queue is paused; resume it to run the next message.',
  /**
   * Steers keep their place at the front of the queue (Q13): a steer is not moved or merged, and
   * nothing is moved ahead of it.
   */
  steer_first:
    'Steers keep their place at the front of the queue: they cannot be moved or merged, and nothing moves ahead of them.',
} as const;
export type NotEligibleReason = keyof typeof notEligibleMessages;

/** Why the thread cannot take this change now (`409 thread_busy`, with `reason`). */
export const threadBusyMessages = {
  /** Switching or deleting versions waits for the running reply (B2, B4). */
  turn_running: 'Wait for the reply to finish, or stop it, before changing versions.',
  /** ... and for a pending tool approval, which holds the thread's active slot (Q12). */
  approval_pending: 'Decide on the tool approval, or stop the reply, before changing versions.',
  /** Editing into a new version also waits for the queue: its reply would overtake it (B1). */
  queue_waiting: 'Send or delete the queued messages before editing a message.',
  /** Compact now (C3) waits for the running reply (or its pending approval): it summarizes settled messages. */
  reply_running: 'Wait for the reply to finish, or stop it, before compacting.',
  /** A Stop whose turn did not settle within the interrupt's bound. */
  stop_timed_out: 'The running turn did not stop in time; try again.',
  /** A new chat starts from finished messages only (P3): not a running reply or a failed attempt. */
  not_settled:
    'Wait for this reply to finish, or resolve the failed message, before starting a new chat from it.',
} as const;
export type ThreadBusyReason = keyof typeof threadBusyMessages;

/** What cannot be found (`404 not_found`): the same words for a missing and a foreign one (O3). */
export const notFoundMessages = {
  thread: 'Thread not found.',
  turn: 'Turn not found.',
  message: 'Message not found.',
  branch: 'Branch not found.',
  approval: 'Approval request not found.',
  share: 'Share not found.',
  image: 'Image not found.',
  attachment: 'Attachment not found.',
  route: 'No such route.',
} as const;
export type NotFoundSubject = keyof typeof notFoundMessages;

/** The names of the accepted image kinds, as a person reads them ("PNG, JPEG, WebP and GIF"). */
const imageKinds = (() => {
  const names = imageMediaTypes.map((type) => {
    const kind = type.slice('image/'.length);
    return kind === 'webp' ? 'WebP' : kind.toUpperCase();
  });
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
})();

/** The precise words of the other refusals, by code: built from the limits they enforce. */
export const refusalMessages = {
  bad_request: {
    emptyText: 'Message text is empty.',
    feedbackOnReplies: 'Feedback can only be given on replies.',
    cursor: 'Invalid query: cursor is not one this list gave out.',
    notUtf8: 'Request body is not valid UTF-8.',
    notJson: 'Request body is not valid JSON.',
    unstorableText: (reason: string) => `Invalid request body: a text ${reason}.`,
    invalidBody: (where: string, issue: string) => `Invalid request body: ${where}${issue}.`,
    invalidQuery: (where: string, issue: string) => `Invalid query: ${where}${issue}.`,
    notMultipart: 'The upload is not valid multipart/form-data.',
    oneFile: 'Upload exactly one file.',
    fileNameTooLong: (characters: number) => `A file's name may be at most ${characters} characters long.`,
    tooManyParts: (otherFields: number) =>
      `An upload holds one file and at most ${otherFields} other fields.`,
    nestedTooDeep: `Request body is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    unknownModel: (id: string) => `No model "${id}" is offered here; GET /api/models lists them.`,
  },
  too_large: {
    text: `Message text is longer than ${MAX_TEXT_LENGTH} characters.`,
    comment: `A comment can be at most ${MAX_FEEDBACK_COMMENT_LENGTH} characters.`,
    image: `Images can be at most ${MAX_ATTACHMENT_BYTES / (1024 * 1024)} MB.`,
    document: `Documents can be at most ${MAX_DOCUMENT_BYTES / (1024 * 1024)} MB.`,
    pages: `PDFs can have at most ${MAX_DOCUMENT_PAGES} pages.`,
    images: `A message can carry at most ${MAX_ATTACHMENTS_PER_MESSAGE} images and documents.`,
    mergedText: `The merged message would be longer than ${MAX_TEXT_LENGTH} characters.`,
    mergedImages: `The merged message would carry more than ${MAX_ATTACHMENTS_PER_MESSAGE} images and documents; a message can carry at most ${MAX_ATTACHMENTS_PER_MESSAGE}.`,
    imageDimensions: `Images can be at most ${MAX_IMAGE_SIDE} pixels on a side and ${MAX_IMAGE_PIXELS / 1_000_000} megapixels.`,
    body: 'Request body is too large.',
    /** An import whose documents together take longer to read than one request may (D1). */
    readingTime: "This import's documents take too long to read. Import fewer or smaller documents.",
    importBody: `An import can be at most ${MAX_IMPORT_BYTES / (1024 * 1024)} MB.`,
    importCount: (what: string, max: number) => `An import can hold at most ${max} ${what}.`,
  },
  unsupported_media_type: {
    image: `Only ${imageKinds} images can be attached.`,
    attachment: `Only ${imageKinds} images, PDFs, Word documents (.docx) and text files (Markdown, CSV, JSON, code) can be attached.`,
    unreadablePdf: (reason: string) => `This PDF could not be read: ${reason}.`,
    unreadableText: (reason: string) => `This text file could not be read: ${reason}.`,
    unreadableDocx: (reason: string) => `This Word document could not be read: ${reason}.`,
    json: 'Send the request body as application/json.',
    multipart: 'Upload the image as multipart/form-data.',
  },
  not_queued: {
    notWaiting: 'Only messages waiting in the queue can be changed.',
    neighbour: 'The message to place it next to is no longer in the queue.',
    /** The web app's words for an undo that comes after its message left the queue (it ran). */
    undoTooLate: 'That message already left the queue; there is nothing to undo.',
  },
  not_latest_turn: { regenerate: 'Only the latest reply can be regenerated.' },
  already_decided: { as: (status: string) => `This request was already ${status}.` },
  rate_limited: {
    runningTurns: (limit: number) => `At most ${limit} replies can run at once. Wait for one to finish.`,
  },
  unavailable: {
    database: 'The database is not reachable right now. Try again shortly.',
    api: 'The chat server is not reachable. Try again shortly.',
    /** The database went away as the change was being committed: it may have been saved. */
    unsure: 'The database stopped just as this was being saved. Reload to see whether it was.',
    /**
     * Stop & send stopped the reply, then could not start the message (F4): it waits first in the
     * queue, paused as after a Stop. The answer carries `replyStopped` and `queuePaused`.
     */
    stoppedNotSent:
      'The reply stopped, but your message could not start: the database is not reachable. It waits first in the queue, paused; use Send now to try again.',
    /** The same, when the stop itself could not be sent to the reply: the queue is paused, the reply may still run. */
    pausedNotSent:
      'The queue is paused, but the reply could not be stopped: the database is not reachable. Try Stop & send again shortly.',
  },
  overloaded: {
    uploads: 'The server is busy with other uploads. Try again in a moment.',
    /** A send not accepted because the server starts as many turns as it can already (L1). */
    sends: 'The server is busy starting other replies. Nothing was sent; try again in a moment.',
    /** What the web app says while it sends a shed message again by itself. */
    retrying: 'The server is busy. Your message goes out as soon as it can take it…',
  },
} as const;

/**
 * What is wrong with an import that its schema alone cannot say (P2), as the second half of
 * `bad_request.invalidBody(where, issue)`: `Invalid request body: versions.1.messages.4: names no
 * message of this export.`
 */
export const importProblems = {
  duplicateKey: 'is used twice in this export',
  unknownMessage: 'names no message of this export',
  unknownVersion: 'names no version of this export',
  unknownImage: 'names no image of this export',
  unknownDocument: 'names no document of this export',
  unknownToolCall: 'names no tool call of this export',
  /** A chat's tool settings (T1) name a tool this server does not have. */
  unknownTool: 'names no tool of this server',
  notInAnyVersion: 'is in no version',
  unusedImage: 'is used by no message',
  unusedDocument: 'is used by no message',
  listedTwice: 'lists the same message twice',
  outOfOrder: 'is older than the message before it (a version lists its messages oldest first)',
  originalHasParent: 'the first version is the original and has no parent',
  parentNotBefore: 'names a version listed after it (a version comes after the one it was made from)',
  repliesOnly: 'only a reply has a model, a stop or feedback',
  mediaTypeMismatch: (actual: string) => `holds ${actual} bytes, not the media type it names`,
} as const;

/**
 * Why a turn ended without its reply, as its `error` (and the reply's `metadata.error`) says it:
 * what happened and what the person can do. F3: these are the only words a failed reply shows;
 * what an error itself said (a driver's, the database's) goes to the log.
 */
export const turnErrorMessages = {
  /** The model call failed (what its provider said is in the log). */
  modelFailed: 'The model call failed. Retry it, or edit or delete your message.',
  /** The database failed while the reply was running, for a reason other than an outage. */
  databaseFailed:
    'The reply stopped because the server could not read or write the conversation. Retry it, or edit or delete your message.',
  /** Crash recovery settled a turn whose server stopped mid-reply. */
  serverStopped: 'The server running this turn stopped; the reply was cut off.',
  /** A failed turn whose error was not recorded, or a failure of the server's own making. */
  unknown: 'The reply could not be produced. Retry it, or edit or delete your message.',
  /** The run went silent for longer than the runner waits (`TURN_IDLE_MS`); it was stopped. */
  modelIdle: 'The model stopped responding; the reply was cut off.',
  /** The model's context could not be read or made to fit (the database did not answer). */
  contextUnavailable: 'The conversation could not be prepared for the model; try again.',
  /**
   * F1: the reply could not be stored, for a reason other than an outage, after tries over about a
   * minute: the turn ended failed, its text kept on the turn.
   */
  notSaved: 'The reply could not be saved, so it stopped here. Retry it, or edit or delete your message.',
  /** The chat's model was removed from the configuration (M2): the turn fails, no other model answers. */
  modelRemoved: (id: string) =>
    `The model "${id}" is no longer offered here. Pick another model for this chat, then retry.`,
  /** An agent chat's agent (A1) stopped or could not start while it worked on the reply. */
  agentStopped:
    'The agent stopped before it finished; the reply was cut off. Retry it, or send your message again.',
  /** A1: an agent chat whose workspace this server no longer offers (removed, or agent chats off). */
  agentWorkspaceGone:
    "This agent chat's workspace is no longer offered on this server, so its agent cannot run.",
  /** A1: the workspace belongs to another account (an agent chat made before workspaces were kept to one). */
  agentWorkspaceTaken:
    "This agent chat's workspace belongs to another account now, so its agent cannot run here.",
  /**
   * A5: a decision on an agent's tool call whose session cannot be resumed (it asked before it
   * reported its session id): the call cannot go on.
   */
  agentApprovalLost:
    'The agent that asked for this approval is no longer running, so the tool call cannot go on. Send your message again.',
} as const;

/** What a compaction of the model's context (C3) says when it cannot run or fails. */
export const compactionMessages = {
  /** The summary call failed: the model gets the newest messages that fit instead. */
  failed: 'The earlier messages could not be summarized.',
} as const;
