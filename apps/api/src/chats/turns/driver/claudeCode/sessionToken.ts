/**
 * The resume token of a Claude Code session (A3, A7), as kept on each final reply: the session id,
 * and after `@` the last entry of the session's chain the reply ended at (the SDK's message uuid),
 * when the reply saw one. A later message resumes the session by its id; a version forks it at the
 * entry (`resumeSessionAt`), so what came after that reply (the message the version replaces) is
 * left out. Opaque to the host.
 */
export interface SessionPoint {
  sessionId: string;
  /** The chain entry the reply ended at; absent: the token names the session only. */
  at?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function tokenOf(point: SessionPoint): string {
  return point.at ? `${point.sessionId}@${point.at}` : point.sessionId;
}

/** The session a token names; undefined for one that is not a Claude Code token (another driver's). */
export function pointOf(token: string | undefined): SessionPoint | undefined {
  if (!token) return undefined;
  const [sessionId = '', at, ...rest] = token.split('@');
  if (rest.length > 0 || !UUID.test(sessionId)) return undefined;
  if (at === undefined) return { sessionId };
  return UUID.test(at) ? { sessionId, at } : undefined;
}
