import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import type { ProcessSample, ServerProcess } from './processes';
import { MB } from './rows';

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
  /**
   * The API's CPU time over the span (all its processes: a supervisor's API processes too), as a
   * share of the span's wall time (1 = one core).
   */
  apiCpuShare: number;
  /** The same per process, the first one being the one the harness started (the supervisor). */
  perProcess: ProcessShare[];
  /** Peak resident memory over the span (sampled every 100 ms): all processes summed, and each. */
  peakRss: PeakRss;
}

export interface PeakRss {
  /** The peak of the sum over the server's processes, in bytes. */
  sum: number;
  /** Each process's own peak, by pid, in bytes. */
  byPid: Map<number, number>;
}

/** Samples a server's resident memory every 100 ms until `stop`: the peak of the sum, and each process's. */
export function sampleRss(server: ServerProcess): { stop(): PeakRss } {
  const peak: PeakRss = { sum: 0, byPid: new Map() };
  const sample = () => {
    const processes = server.processes();
    let sum = 0;
    for (const { pid, rss } of processes) {
      if (!Number.isFinite(rss)) continue;
      sum += rss;
      peak.byPid.set(pid, Math.max(peak.byPid.get(pid) ?? 0, rss));
    }
    peak.sum = Math.max(peak.sum, sum);
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/** "peak RSS 700 MB in all (each process's peak: 60, 330, 320 MB)". */
export function describePeakRss(peak: PeakRss): string {
  const each = [...peak.byPid.values()].map((bytes) => (bytes / MB).toFixed(0));
  return `peak resident memory ${(peak.sum / MB).toFixed(0)} MB${each.length > 1 ? ` in all (each process's peak: ${each.join(', ')} MB)` : ''}`;
}

export interface ProcessShare {
  pid: number;
  /** CPU time over the span as a share of its wall time (1 = one core). */
  cpuShare: number;
  /** Resident memory at the end, in bytes. */
  rss: number;
}

/** Each process's CPU between two samplings of a server's processes, as a share of `spanMs`. */
export function cpuShares(before: ProcessSample[], after: ProcessSample[], spanMs: number): ProcessShare[] {
  const start = new Map(before.map((sample) => [sample.pid, sample.cpuMs]));
  // A process started during the span counts from zero.
  return after.map((sample) => ({
    pid: sample.pid,
    cpuShare: (sample.cpuMs - (start.get(sample.pid) ?? 0)) / spanMs,
    rss: sample.rss,
  }));
}

export function sumShares(shares: ProcessShare[]): number {
  return shares.reduce((total, share) => total + share.cpuShare, 0);
}

/** "supervisor 1 %, 92 %, 90 %": each process's share of one core (nothing for a lone process). */
export function describeShares(shares: ProcessShare[]): string {
  if (shares.length < 2) return '';
  const [first, ...rest] = shares;
  const percent = (share: ProcessShare) => `${(share.cpuShare * 100).toFixed(0)}%`;
  return ` (supervisor ${percent(first as ProcessShare)}, API processes ${rest.map(percent).join(', ')})`;
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
  const processesBefore = api.processes();
  const rss = sampleRss(api);
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
      const spanMs = performance.now() - startedAt;
      const apiCpuShare = (api.cpuMs() - cpuBefore) / spanMs;
      const perProcess = cpuShares(processesBefore, api.processes(), spanMs);
      await client.close();
      const overflowsAfter = listenOverflows();
      return {
        longestHealthMs,
        apiCpuShare,
        perProcess,
        peakRss: rss.stop(),
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
  const processes =
    report.perProcess.length > 1 ? `API CPU (${report.perProcess.length} processes)` : 'API process CPU';
  return `meanwhile: ${processes} ${(report.apiCpuShare * 100).toFixed(0)}% of one core${describeShares(report.perProcess)}, ${describePeakRss(report.peakRss)}, slowest health answer on an open connection ${report.longestHealthMs.toFixed(0)} ms, connections dropped at a full listen queue ${overflows}`;
}
