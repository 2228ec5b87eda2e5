import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import type { ServerProcess } from './processes';

/**
 * Tells apart the two ways a load scenario's answers can all come late at once: the API stops
 * answering (its event loop or the database stalls), or the machine stops taking in new connections
 * (the listen queue is full: the kernel drops the connection and the client tries again only after
 * 1 s, then 3 s). A health request on a connection opened beforehand sees only the first; the
 * kernel's listen-queue counters see only the second. The API's process CPU time over the same span
 * says whether its one JavaScript thread simply had more to do than time to do it.
 */
export interface StallWatch {
  /** Stops watching; what was seen while it ran. */
  stop(): Promise<StallReport>;
}

export interface StallReport {
  /** The slowest health answer on the connection opened before (ms). */
  longestHealthMs: number;
  /** Connections the machine's kernel dropped at a full listen queue meanwhile (Linux only). */
  listenOverflows: number | undefined;
  /** The API process's CPU time over the span, as a share of the span's wall time (1 = one core). */
  apiCpuShare: number;
}

const EVERY_MS = 20;

/** `ListenOverflows` of `/proc/net/netstat`: the whole machine's, every listening socket's. */
function listenOverflows(): number | undefined {
  try {
    const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('TcpExt:'))
      .map((line) => line.trim().split(/\s+/));
    const index = names?.indexOf('ListenOverflows') ?? -1;
    const value = Number(values?.[index]);
    return index > 0 && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export async function watchForStalls(api: ServerProcess): Promise<StallWatch> {
  const client = new Client(api.baseUrl, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  const health = async () => {
    const response = await client.request({ method: 'GET', path: '/api/health' });
    await response.body.arrayBuffer();
  };
  await health(); // the connection is open before anything is watched
  const overflowsBefore = listenOverflows();
  const cpuBefore = api.cpuMs();
  const startedAt = performance.now();
  let longestHealthMs = 0;
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const at = performance.now();
      await health();
      longestHealthMs = Math.max(longestHealthMs, performance.now() - at);
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      const apiCpuShare = (api.cpuMs() - cpuBefore) / (performance.now() - startedAt);
      await client.close();
      const overflowsAfter = listenOverflows();
      return {
        longestHealthMs,
        apiCpuShare,
        listenOverflows:
          overflowsBefore === undefined || overflowsAfter === undefined
            ? undefined
            : overflowsAfter - overflowsBefore,
      };
    },
  };
}

/** How a report reads in a row's note. */
export function describeStalls(report: StallReport): string {
  const overflows =
    report.listenOverflows === undefined ? 'not counted here' : String(report.listenOverflows);
  return `meanwhile: API process CPU ${(report.apiCpuShare * 100).toFixed(0)}% of one core, slowest health answer on an open connection ${report.longestHealthMs.toFixed(0)} ms, connections dropped at a full listen queue ${overflows}`;
}
