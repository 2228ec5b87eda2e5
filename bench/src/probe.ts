import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';

/** One request a probe makes; the answer's status and its time to the whole body are kept. */
export interface ProbeRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** How long after `go` this request is sent; the plan's `delayMs` when not given. */
  delayMs?: number;
}

export interface ProbeAnswer {
  status: number;
  /** From the request to the end of its body, in milliseconds (NaN when it failed outright). */
  ms: number;
}

interface Plan {
  baseUrl: string;
  requests: ProbeRequest[];
  /** How long after `go` the requests are sent (each request may say otherwise). */
  delayMs: number;
}

/**
 * Requests timed by a process of their own, each on a connection it opened beforehand: what one
 * person's browser, which keeps its connections to a site open, sees while a crowd of others (the
 * harness) floods the API. Timed inside the harness they would also wait behind the harness's own
 * work for that crowd (on a 2-core machine, most of what it measured).
 */
export class Probe {
  private constructor(private readonly child: ChildProcess) {}

  /** Starts the probe's process and opens (and uses once) one connection per request. */
  static async start(baseUrl: string, requests: ProbeRequest[], delayMs: number): Promise<Probe> {
    const child = fork(fileURLToPath(import.meta.url), ['--probe'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const probe = new Probe(child);
    const ready = probe.next();
    child.send({ baseUrl, requests, delayMs } satisfies Plan);
    await ready;
    return probe;
  }

  /** Sends each request its `delayMs` after this call; resolves with their answers, in order. */
  async fire(): Promise<ProbeAnswer[]> {
    const answers = this.next() as Promise<ProbeAnswer[]>;
    this.child.send('go');
    return (await answers).map((answer) => ({ ...answer, ms: answer.ms ?? Number.NaN }));
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill();
  }

  private next(): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the probe process ended (${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (message) => {
        this.child.off('exit', onExit);
        resolve(message);
      });
    });
  }
}

/** The probe's own process: the plan, a warm connection per request, then the timed requests. */
async function runProbe(): Promise<void> {
  // Gone with the harness, however it ends.
  process.on('disconnect', () => process.exit(0));
  const plan = await new Promise<Plan>((resolve) =>
    process.once('message', (message) => resolve(message as Plan)),
  );
  const clients = plan.requests.map(() => new Client(plan.baseUrl, { keepAliveTimeout: 60_000 }));
  for (const client of clients) {
    const warm = await client.request({ method: 'GET', path: '/api/health' });
    await warm.body.dump();
  }
  process.send?.('ready');
  await new Promise((resolve) => process.once('message', resolve));
  const answers = await Promise.all(
    plan.requests.map(async (request, index) => {
      await new Promise((resolve) => setTimeout(resolve, request.delayMs ?? plan.delayMs));
      const at = performance.now();
      try {
        const response = await (clients[index] as Client).request({
          method: request.method,
          path: request.path,
          headers: request.headers,
        });
        await response.body.dump();
        return { status: response.statusCode, ms: performance.now() - at };
      } catch {
        return { status: 0, ms: null };
      }
    }),
  );
  process.send?.(answers);
  await Promise.all(clients.map((client) => client.close()));
}

if (process.argv.includes('--probe')) await runProbe();
