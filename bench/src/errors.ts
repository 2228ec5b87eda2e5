/** An error's message with its causes (fetch hides the socket error in `cause`). */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error; current instanceof Error && parts.length < 4; current = current.cause)
    parts.push(current.message);
  return parts.length > 0 ? parts.join(': ') : String(error);
}
