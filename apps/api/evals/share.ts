import type { EvalEnvironment } from './environment';

/**
 * A share snapshot of the thread (PRODUCT H1), read the way anyone with its link reads it:
 * `POST /api/threads/:id/shares`, then the public `GET /api/shares/:token`. Until the API has a
 * share service, the scorer that reads this reports "not run", never "passed"; once it has one,
 * any failure to create or read the share fails the scorer.
 */
export type ShareSnapshot = { built: false } | { built: true; ok: boolean; status: number; text: string };

export async function readShareSnapshot(env: EvalEnvironment, threadId: string): Promise<ShareSnapshot> {
  if (!env.sharesBuilt) return { built: false };
  const headers = { ...env.headers, 'content-type': 'application/json' };
  const created = await env.app.request(`/api/threads/${threadId}/shares`, {
    method: 'POST',
    headers,
    body: '{}',
  });
  const createdText = await created.text();
  const token = parseToken(createdText);
  if (!created.ok || !token) return { built: true, ok: false, status: created.status, text: createdText };
  const read = await env.app.request(`/api/shares/${encodeURIComponent(token)}`);
  return { built: true, ok: read.ok, status: read.status, text: `${createdText}\n${await read.text()}` };
}

function parseToken(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { share?: { token?: unknown } };
    return typeof body.share?.token === 'string' ? body.share.token : undefined;
  } catch {
    return undefined;
  }
}
