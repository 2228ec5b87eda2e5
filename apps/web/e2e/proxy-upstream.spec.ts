import { expect, test } from './fixtures';
import { OwnServers } from './support/ownServers';
import { ProxyGuest } from './support/rawHttp';

test.describe('when the API dies behind the web proxy', () => {
  let servers: OwnServers;
  test.beforeAll(async () => {
    test.setTimeout(180_000);
    servers = await OwnServers.start();
  });
  test.afterAll(async () => {
    await servers?.stop();
  });

  test('an open reply stream through the proxy breaks at once, and the API starts again without a manual step', async () => {
    test.setTimeout(180_000);
    const origin = servers.webOrigin;
    const guest = await ProxyGuest.signIn(origin);
    const threadId = await guest.createThread();

    const response = await fetch(`${origin}/api/threads/${threadId}/turns`, {
      method: 'POST',
      headers: guest.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ clientRequestId: crypto.randomUUID(), text: 'a long one [[words:5000]]' }),
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);

    await servers.killApi();
    const killedAt = Date.now();
    // Read on until the stream ends or fails; an open stream would run into the 10 s limit.
    const outcome = await Promise.race([
      (async () => {
        try {
          while (!(await reader.read()).done) {}
          return 'ended';
        } catch {
          return 'failed';
        }
      })(),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 10_000)),
    ]);
    expect(outcome).not.toBe('still open');
    expect(Date.now() - killedAt).toBeLessThan(5_000);

    // While the API is down the proxy answers with the contract's JSON, not an HTML 502.
    const down = await guest.request('GET', `/api/threads/${threadId}`);
    expect(down.status).toBe(503);
    expect(down.json().error?.code).toBe('unavailable');

    // The killed API left its embedded PostgreSQL running; the next start deals with it.
    await servers.startApi();
    const back = await guest.request('GET', `/api/threads/${threadId}`);
    expect(back.status).toBe(200);
  });
});
