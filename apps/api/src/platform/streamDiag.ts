// TEMPORARY analysis of issue 40 (not to be merged): with STREAM_DIAG_DIR set, each API process
// records its event-loop stalls, GC pauses, the local model's timer lateness and each reply's
// text-bearing writes, and writes them as JSON to STREAM_DIAG_DIR/<pid>.json when it exits.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const dir = process.env.STREAM_DIAG_DIR;
export const diagOn = Boolean(dir);
const epoch = () => performance.timeOrigin + performance.now();

const stalls: [number, number][] = [];
const gcs: [number, number, number][] = [];
const lateness: [number, number][] = [];
const writes = new Map<string, number[]>();
const marks: [number, string][] = [];

if (dir) {
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - 10;
    if (late > 15) stalls.push([performance.timeOrigin + now, late]);
    last = now;
  }, 10).unref();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      gcs.push([performance.timeOrigin + entry.startTime, entry.duration, (entry as unknown as { detail: { kind: number } }).detail?.kind ?? 0]);
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    writeFileSync(
      `${dir}/${process.pid}.json`,
      JSON.stringify({ pid: process.pid, stalls, gcs, lateness, writes: Object.fromEntries(writes), marks }),
    );
  });
}

export function diagLateness(ms: number): void {
  if (dir) lateness.push([epoch(), ms]);
}
export function diagWrite(turnId: string): void {
  if (!dir) return;
  let list = writes.get(turnId);
  if (!list) writes.set(turnId, (list = []));
  list.push(epoch());
}
export function diagMark(what: string): void {
  if (dir) marks.push([epoch(), what]);
}
