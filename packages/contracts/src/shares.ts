/**
 * Shared snapshots (H1): a read-only copy of a thread's shown version, taken at share time.
 * A snapshot holds only what is listed here (an allow-list), never the internal message shape.
 */

/** One live link to a snapshot, as its owner sees it. */
export interface Share {
  token: string;
  /** The public page of the snapshot: the web origin's `/share/<token>`. */
  url: string;
  createdAt: string;
}

/**
 * The parts a snapshot keeps: visible text, the results of tool calls that finished, and images
 * and documents (by a share-scoped URL, `/api/shares/:token/media/:id`, that stops working when it
 * is revoked). A document also keeps what its chip shows: its size and, for a PDF, its pages (D1).
 */
export type SharedPart =
  | { type: 'text'; text: string }
  | { type: 'tool-result'; toolName: string; output: unknown }
  | { type: 'file'; mediaType: string; url: string; filename?: string; size?: number; pages?: number };

export interface SharedMessage {
  role: 'user' | 'assistant';
  parts: SharedPart[];
  createdAt?: string;
}

/** `GET /api/shares/:token`: what anyone with the link sees, with no account. */
export interface SharedSnapshot {
  title: string;
  createdAt: string;
  messages: SharedMessage[];
}

/** `POST /api/threads/:id/shares` answers `201 { share }`; the list answers `{ shares }`. */
export interface ShareAnswer {
  share: Share;
}
export interface ShareList {
  shares: Share[];
}
