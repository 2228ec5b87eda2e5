/**
 * `pnpm bench`: measures the API (and the built web app) beside a bare h3 + AI SDK baseline over
 * the same local model, in one run, and prints a markdown table (or JSON with --json).
 *
 *   --quick            small N and few iterations (a minute or two); does not write docs/benchmarks.md
 *   --json             print the rows as JSON instead of the table
 *   --write / --no-write   write docs/benchmarks.md (default: written in full mode only)
 *   --out=FILE         write the report there instead
 *   --only=a,b         run only some scenarios: cpu, latency, interrupts, attach, rate, burst, uploads,
 *                      detail, web, streams
 *   --streams=500,1000 override the concurrent stream counts
 *   --sizes=100,1000   override the thread-detail sizes (even numbers of messages)
 *   --from-json=FILE   no run: render (and with --write, write) the report of an earlier --json run
 *   --cpu-prof=DIR     run the API with `node --cpu-prof` (profile written to DIR on exit)
 *   --rates=50,100     override the paces (sends a second) of the sustained new-turn figure
 *   --api-dir=DIR      run the API of another checkout (its apps/api, installed) beside this
 *                      harness: the same figures before and after a change
 *
 * The scenarios of a turn's cost (cpu, latency, interrupts) run once per runtime driver
 * (`CHAT_RUNTIME`, CHAT_RUNTIMES: the API's default first), each against an API process of its
 * own, their rows labelled by driver; the others run on the default driver.
 *
 * BENCH_PORT_BASE=N puts the baseline on N, the API on N+1, the web app on N+2, an embedded
 * PostgreSQL on N+3, a second API instance on N+4 and the other drivers' APIs from N+5 on
 * (otherwise free ports). BENCH_DATABASE_URL or DATABASE_URL names a PostgreSQL server to create
 * the run's own database on.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAT_RUNTIMES, type ChatRuntime } from '@chat/api/chat-runtimes';
import { freePort } from '@chat/db';
import { Agent, setGlobalDispatcher } from 'undici';
import { type BenchDatabase, openBenchDatabase } from './database';
import { describeError } from './errors';
import { readStream, Session } from './http';
import { repoRoot, type ServerProcess, startApi, startBaseline } from './processes';
import { markdownTable, type RunInfo, runInfo, writeReport } from './report';
import { FULL, MB, type Mode, QUICK, type Row } from './rows';
import type { BenchContext } from './scenarios/context';
import { measureCpu } from './scenarios/cpu';
import { measureDetail } from './scenarios/detail';
import { measureAttachLag } from './scenarios/instances';
import { measureInterrupts } from './scenarios/interrupts';
import { measureLatency } from './scenarios/latency';
import { measureBurst, measureSustainedRate } from './scenarios/load';
import { measureStreams } from './scenarios/streams';
import { measureUploadFlood } from './scenarios/uploads';
import { measureWebAssets } from './scenarios/webAssets';

const SCENARIOS = [
  'cpu',
  'latency',
  'interrupts',
  'attach',
  'rate',
  'burst',
  'uploads',
  'detail',
  'web',
  'streams',
] as const;
type Scenario = (typeof SCENARIOS)[number];

/** The scenarios of a turn's own cost, measured on every runtime driver beside the baseline. */
const PER_DRIVER: ReadonlySet<Scenario> = new Set(['cpu', 'latency', 'interrupts']);
const [DEFAULT_DRIVER, ...OTHER_DRIVERS] = CHAT_RUNTIMES;

interface Options {
  mode: Mode;
  json: boolean;
  write: boolean;
  out: string;
  only: Set<Scenario>;
  cpuProfileDir?: string;
  fromJson?: string;
  apiDir?: string;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const mode: Mode = { ...(quick ? QUICK : FULL) };
  const streams = value('streams');
  if (streams) mode.streams = streams.split(',').map(Number);
  const rates = value('rates');
  if (rates) mode.rates = rates.split(',').map(Number);
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
    apiDir: value('api-dir'),
  };
}

async function ports(): Promise<{
  baseline: number;
  api: number;
  web: number;
  postgres: number;
  secondApi: number;
  /** One API per driver besides the default, in OTHER_DRIVERS' order. */
  driverApis: number[];
}> {
  const base = Number(process.env.BENCH_PORT_BASE);
  if (base > 0)
    return {
      baseline: base,
      api: base + 1,
      web: base + 2,
      postgres: base + 3,
      secondApi: base + 4,
      driverApis: OTHER_DRIVERS.map((_, index) => base + 5 + index),
    };
  const driverApis = [];
  for (const _ of OTHER_DRIVERS) driverApis.push(await freePort());
  return {
    baseline: await freePort(),
    api: await freePort(),
    web: await freePort(),
    postgres: await freePort(),
    secondApi: await freePort(),
    driverApis,
  };
}

/** A driver's rows: its name in each id (`cpu-per-turn-ai-sdk`) and figure. */
function labelled(rows: Row[], driver: ChatRuntime): Row[] {
  return rows.map((row) => ({ ...row, id: `${row.id}-${driver}`, figure: `${row.figure} [${driver}]` }));
}

/** A scenario's rows, or the one row saying it failed: one broken scenario must not lose the others. */
async function rowsOf(name: Scenario, step: () => Promise<Row[]>, label: string = name): Promise<Row[]> {
  log(`${label}...`);
  try {
    return await step();
  } catch (error) {
    const message = describeError(error);
    log(`${label} failed: ${message}`);
    return [{ id: `${name}-failed`, figure: `${name} scenario`, unit: 'ms', notRun: `failed: ${message}` }];
  }
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
      apiDir: options.apiDir,
      env: { CHAT_RUNTIME: DEFAULT_DRIVER },
    });
    started.push(api);
    log(
      `baseline ${baseline.baseUrl}, api ${api.baseUrl} (log: ${join(tmpdir(), `chat-bench-api-${port.api}.log`)})`,
    );
    const session = await Session.guest(api.baseUrl, webOrigin);
    const context: BenchContext = { mode: options.mode, api, baseline, session, log };

    const rows: Row[] = [await idleMemory(context)];

    // A turn's cost on each driver: an API process per driver on the same database (the same
    // build), each scenario's rows of every driver together.
    const drivers: Array<{ name: ChatRuntime; context: BenchContext }> = [{ name: DEFAULT_DRIVER, context }];
    const measured = SCENARIOS.filter((name) => PER_DRIVER.has(name) && options.only.has(name));
    if (measured.length > 0) {
      for (const [index, name] of OTHER_DRIVERS.entries()) {
        const driverPort = port.driverApis[index] as number;
        const logFile = join(tmpdir(), `chat-bench-api-${driverPort}.log`);
        const driverApi = await startApi({
          port: driverPort,
          databaseUrl: database.url,
          webOrigin,
          apiDir: options.apiDir,
          build: false,
          cpuProfileDir: options.cpuProfileDir,
          logFile,
          env: { CHAT_RUNTIME: name },
        });
        started.push(driverApi);
        log(`api on the ${name} driver ${driverApi.baseUrl} (log: ${logFile})`);
        drivers.push({
          name,
          context: { ...context, api: driverApi, session: session.via(driverApi.baseUrl) },
        });
      }
    }
    const perDriver: Record<string, (driverContext: BenchContext) => Promise<Row[]>> = {
      cpu: measureCpu,
      latency: measureLatency,
      interrupts: measureInterrupts,
    };
    for (const name of measured) {
      for (const driver of drivers) {
        const measure = perDriver[name] as (driverContext: BenchContext) => Promise<Row[]>;
        const label = `${name} on ${driver.name}`;
        rows.push(...labelled(await rowsOf(name, () => measure(driver.context), label), driver.name));
      }
    }
    for (const driver of drivers.slice(1)) {
      started.splice(started.indexOf(driver.context.api), 1);
      await driver.context.api.stop();
    }

    // The rest on the default driver.
    const steps: Array<[Scenario, () => Promise<Row[]>]> = [
      [
        'attach',
        async () => {
          // A second instance of the same build on the same database.
          const second = await startApi({
            port: port.secondApi,
            databaseUrl: (database as BenchDatabase).url,
            webOrigin,
            apiDir: options.apiDir,
            build: false,
            logFile: join(tmpdir(), `chat-bench-api-${port.secondApi}.log`),
          });
          try {
            return await measureAttachLag(context, second);
          } finally {
            await second.stop();
          }
        },
      ],
      ['rate', () => measureSustainedRate(context)],
      ['burst', () => measureBurst(context)],
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
      if (options.only.has(name)) rows.push(...(await rowsOf(name, step)));
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
