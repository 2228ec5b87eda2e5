/**
 * `pnpm bench`: measures the API (and the built web app) beside a bare h3 + AI SDK baseline over
 * the same local model, in one run, and prints a markdown table (or JSON with --json).
 *
 *   --quick            small N and few iterations (seconds); does not write docs/benchmarks.md
 *   --json             print the rows as JSON instead of the table
 *   --write / --no-write   write docs/benchmarks.md (default: written in full mode only)
 *   --out=FILE         write the report there instead
 *   --only=a,b         run only some scenarios: latency, interrupts, uploads, streams, detail, web
 *   --streams=500,1000 override the concurrent stream counts
 *   --sizes=100,1000   override the thread-detail sizes (even numbers of messages)
 *   --from-json=FILE   no run: render (and with --write, write) the report of an earlier --json run
 *   --cpu-prof=DIR     run the API with `node --cpu-prof` (profile written to DIR on exit)
 *
 * BENCH_PORT_BASE=N puts the baseline on N, the API on N+1, the web app on N+2 and an embedded
 * PostgreSQL on N+3 (otherwise free ports). BENCH_DATABASE_URL or DATABASE_URL names a PostgreSQL
 * server to create the run's own database on.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@chat/db';
import { Agent, setGlobalDispatcher } from 'undici';
import { type BenchDatabase, openBenchDatabase } from './database';
import { describeError } from './errors';
import { readStream, Session } from './http';
import { repoRoot, type ServerProcess, startApi, startBaseline } from './processes';
import { markdownTable, type RunInfo, runInfo, writeReport } from './report';
import { FULL, MB, type Mode, QUICK, type Row } from './rows';
import type { BenchContext } from './scenarios/context';
import { measureDetail } from './scenarios/detail';
import { measureInterrupts } from './scenarios/interrupts';
import { measureLatency } from './scenarios/latency';
import { measureStreams } from './scenarios/streams';
import { measureUploadFlood } from './scenarios/uploads';
import { measureWebAssets } from './scenarios/webAssets';

const SCENARIOS = ['latency', 'interrupts', 'uploads', 'detail', 'web', 'streams'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  mode: Mode;
  json: boolean;
  write: boolean;
  out: string;
  only: Set<Scenario>;
  cpuProfileDir?: string;
  fromJson?: string;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const mode: Mode = { ...(quick ? QUICK : FULL) };
  const streams = value('streams');
  if (streams) mode.streams = streams.split(',').map(Number);
  const sizes = value('sizes');
  if (sizes) mode.detailSizes = sizes.split(',').map(Number);
  const only = value('only')?.split(',') ?? [...SCENARIOS];
  for (const name of only)
    if (!SCENARIOS.includes(name as Scenario))
      throw new Error(`unknown scenario ${name}: ${SCENARIOS.join(', ')}`);
  return {
    mode,
    json: argv.includes('--json'),
    write: argv.includes('--write') || (!quick && !argv.includes('--no-write')),
    out: value('out') ?? join(repoRoot, 'docs/benchmarks.md'),
    only: new Set(only as Scenario[]),
    cpuProfileDir: value('cpu-prof'),
    fromJson: value('from-json'),
  };
}

async function ports(): Promise<{ baseline: number; api: number; web: number; postgres: number }> {
  const base = Number(process.env.BENCH_PORT_BASE);
  if (base > 0) return { baseline: base, api: base + 1, web: base + 2, postgres: base + 3 };
  return {
    baseline: await freePort(),
    api: await freePort(),
    web: await freePort(),
    postgres: await freePort(),
  };
}

// A detail of a long thread can take minutes: no client-side timeouts, no cap on connections.
setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0, connections: null }));

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** Resident memory once the servers have started, answered a few turns and settled. */
async function idleMemory(context: BenchContext): Promise<Row> {
  const threadId = await context.session.createThread();
  for (let index = 0; index < 3; index++) {
    await readStream(await context.session.send(threadId, 'Warm up. [[words:3]]'), performance.now());
  }
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const app = context.api.rss();
  const baseline = context.baseline.rss();
  return {
    id: 'rss-idle',
    figure: 'resident memory, idle (after start and 3 turns)',
    unit: 'MB',
    baseline: baseline / MB,
    app: app / MB,
    ratio: `x${(app / baseline).toFixed(1)}`,
    target: '<= 250 MB',
    met: app <= 250 * MB,
  };
}

async function run(options: Options): Promise<{ rows: Row[]; database: string }> {
  const port = await ports();
  const webOrigin = `http://127.0.0.1:${port.web}`;
  const started: ServerProcess[] = [];
  let database: BenchDatabase | undefined;
  const stopAll = async () => {
    for (const server of started.reverse()) await server.stop().catch(() => {});
    await database?.drop();
  };
  const interrupted = () => {
    log('interrupted: stopping the servers and dropping the database');
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    database = await openBenchDatabase({ port: port.postgres });
    log(`database created (${database.server})`);
    const baseline = await startBaseline(port.baseline);
    started.push(baseline);
    const api = await startApi({
      port: port.api,
      databaseUrl: database.url,
      webOrigin,
      cpuProfileDir: options.cpuProfileDir,
      logFile: join(tmpdir(), `chat-bench-api-${port.api}.log`),
    });
    started.push(api);
    log(
      `baseline ${baseline.baseUrl}, api ${api.baseUrl} (log: ${join(tmpdir(), `chat-bench-api-${port.api}.log`)})`,
    );
    const session = await Session.guest(api.baseUrl, webOrigin);
    const context: BenchContext = { mode: options.mode, api, baseline, session, log };

    const rows: Row[] = [await idleMemory(context)];
    const steps: Array<[Scenario, () => Promise<Row[]>]> = [
      ['latency', () => measureLatency(context)],
      ['interrupts', () => measureInterrupts(context)],
      ['uploads', () => measureUploadFlood(context)],
      ['detail', () => measureDetail(context)],
      [
        'web',
        () => measureWebAssets({ quick: options.mode.quick, port: port.web, apiOrigin: api.baseUrl, log }),
      ],
      // Last: a thousand streams can leave the API in a state that spoils what follows.
      ['streams', () => measureStreams(context)],
    ];
    for (const [name, step] of steps) {
      if (!options.only.has(name)) continue;
      log(`${name}...`);
      try {
        rows.push(...(await step()));
      } catch (error) {
        // One broken scenario must not lose the others' figures; the row says what happened.
        const message = describeError(error);
        log(`${name} failed: ${message}`);
        rows.push({
          id: `${name}-failed`,
          figure: `${name} scenario`,
          unit: 'ms',
          notRun: `failed: ${message}`,
        });
      }
    }
    return { rows, database: database.server };
  } finally {
    await stopAll();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  let info: RunInfo;
  let rows: Row[];
  if (options.fromJson) {
    ({ info, rows } = JSON.parse(readFileSync(options.fromJson, 'utf8')) as { info: RunInfo; rows: Row[] });
  } else {
    const startedAt = Date.now();
    const result = await run(options);
    rows = result.rows;
    const seconds = Math.round((Date.now() - startedAt) / 1000);
    info = runInfo(options.mode.quick ? 'quick' : 'full', result.database, seconds);
  }
  if (options.json) process.stdout.write(`${JSON.stringify({ info, rows }, null, 2)}\n`);
  else process.stdout.write(`${markdownTable(rows)}\n`);
  if (options.write) {
    writeReport(options.out, rows, info);
    log(`wrote ${options.out}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
