import type { ThreadDetail } from '@chat/contracts';
import { ApiClient, waitFor } from '../client';
import type { FaultLab } from './lab';

/**
 * A chat on the fault lab's API, and the reads of the fault tests, which see through the passing
 * `503` a fault leaves behind (a connection that broke in an outage opens the database circuit
 * until the next probe) and a restarting API. Setting up is not under test: it is tried again.
 */

/** A person and a new chat; `background`: it drains with no viewer (Q15), so a queue goes on. */
export async function openChat(
  lab: FaultLab,
  options: { background?: boolean } = {},
): Promise<{ client: ApiClient; threadId: string }> {
  const opened = await waitFor(
    async () => {
      try {
        const client = await ApiClient.signIn(lab.baseUrl);
        const threadId = await client.createThread();
        if (options.background) {
          const set = await client.json('PATCH', `/api/threads/${threadId}`, { drainMode: 'background' });
          if (set.status !== 200) return undefined;
        }
        return { client, threadId };
      } catch {
        return undefined;
      }
    },
    (value) => value !== undefined,
    30_000,
  );
  return opened as { client: ApiClient; threadId: string };
}

/** A request of the setup, made again while the API answers a passing `503` or none (up to 30 s). */
export async function served(request: () => Promise<Response>): Promise<Response> {
  const until = Date.now() + 30_000;
  for (;;) {
    const response = await request().catch(() => undefined);
    if (response && (response.status !== 503 || Date.now() > until)) return response;
    await response?.body?.cancel();
    if (Date.now() > until) throw new Error('no answer for 30 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The thread once nothing runs in it; `drained`: and its queue went on as far as it can (empty,
 * paused, or stopped at a failed head).
 */
export async function atRest(
  lab: FaultLab,
  client: ApiClient,
  threadId: string,
  options: { drained?: boolean; timeoutMs?: number } = {},
): Promise<ThreadDetail> {
  const { drained = false, timeoutMs = 90_000 } = options;
  const detail = await waitFor(
    () =>
      client
        .via(lab.baseUrl)
        .detail(threadId)
        .catch(() => undefined),
    (read) =>
      read !== undefined &&
      read.turnQueue.activeTurn === null &&
      (!drained ||
        read.turnQueue.items.length === 0 ||
        read.turnQueue.paused ||
        read.turnQueue.items[0]?.status === 'failed'),
    timeoutMs,
  );
  if (!detail) throw new Error(`thread ${threadId} could not be read`);
  return detail;
}
