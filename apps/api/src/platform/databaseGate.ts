import type { H3Event } from 'h3';
import type { DatabaseCircuit } from './databaseCircuit';

/**
 * Routes that answer without the circuit: liveness, and readiness, which asks the database itself
 * (so it says 200 as soon as the database is back, even before the circuit's next probe).
 */
const WITHOUT_DATABASE = new Set(['/api/health', '/api/ready']);

/**
 * A thread's event stream, which a page keeps open for as long as it shows the thread. It is ended
 * when the circuit opens: the page's stream reconnects, meets the `503`, and the page says it is
 * reconnecting until the database is back (then it catches up). A turn's reply stream is not
 * ended: the reply goes on from the model, and its end is settled when the database answers.
 */
const EVENT_STREAM = /^\/api\/threads\/[^/]+\/events\/?$/;

/**
 * While the database cannot be reached, every other route answers `503 unavailable` at once, and
 * open event streams are ended (above).
 */
export function databaseGate(circuit: DatabaseCircuit) {
  return async (event: H3Event, next: () => unknown) => {
    const path = event.url.pathname;
    if (WITHOUT_DATABASE.has(path)) return await next();
    circuit.assertClosed();
    const answer = await next();
    return EVENT_STREAM.test(path) && answer instanceof Response ? endedWhenOpen(answer, circuit) : answer;
  };
}

/** The same response, whose body ends (cleanly, as a server closing the stream) when the circuit opens. */
function endedWhenOpen(response: Response, circuit: DatabaseCircuit): Response {
  const body = response.body;
  if (!body) return response;
  const reader = body.getReader();
  let ended = false;
  let unsubscribe = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      unsubscribe = circuit.onOpen(() => {
        if (ended) return;
        ended = true;
        unsubscribe();
        controller.close();
        void reader.cancel().catch(() => {});
      });
    },
    pull: async (controller) => {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (ended) return;
      if (done) {
        ended = true;
        unsubscribe();
        controller.close();
      } else controller.enqueue(value);
    },
    cancel: async (reason) => {
      ended = true;
      unsubscribe();
      await reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(stream, { status: response.status, headers: response.headers });
}
