import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseHung, HangWatch } from '../src/hangWatch';

/**
 * The hang watch's deadline against a busy event loop: a connection whose answer arrived while the
 * loop was blocked is not cut when the late timer fires first, and one that got no answer still is.
 * A server of the test's own, in a process of its own (so it answers while this loop is blocked),
 * plays PostgreSQL: it answers every write with a ReadyForQuery, except a write of 'silent'; after
 * answering a write of 'query', it leaves a file (\`ANSWERED\`), so a test whose loop is blocked can
 * tell that the answer is on its way without reading it.
 */
const SERVER = `
const net = require('node:net');
const fs = require('node:fs');
const server = net.createServer((socket) => {
  socket.on('error', () => {});
  socket.on('data', (data) => {
    if (String(data) === 'silent') return;
    socket.write(Buffer.from([0x5a, 0, 0, 0, 5, 0x49]), () => {
      if (String(data) === 'query') fs.writeFileSync(process.env.ANSWERED, '');
    });
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

let server: ChildProcess;
let port = 0;
const scratch = mkdtempSync(join(tmpdir(), 'hang-watch-'));
const answered = join(scratch, 'answered');

beforeAll(async () => {
  server = spawn(process.execPath, ['-e', SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ANSWERED: answered },
  });
  port = await new Promise<number>((resolve) =>
    server.stdout?.once('data', (data) => resolve(Number(String(data)))),
  );
});

afterAll(() => {
  server?.kill();
  rmSync(scratch, { recursive: true, force: true });
});

function watchOf(): HangWatch {
  return new HangWatch({
    check: async () => {},
    resetCheck: async () => {},
    // Only the deadline is under test: the check never runs.
    stallMs: 60_000,
    checkMs: 1_000,
    deadlineMs: 100,
    tickMs: 20,
  });
}

async function connected(
  watch: HangWatch,
): Promise<{ socket: Socket; errors: unknown[]; answers: number[] }> {
  const socket = watch.socket({ host: ['127.0.0.1'], port: [port] });
  const errors: unknown[] = [];
  const answers: number[] = [];
  socket.on('error', (error) => errors.push(error));
  socket.on('data', (data) => answers.push(data.length));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, errors, answers };
}

function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy: the answer arrives meanwhile and waits in the kernel to be read.
  }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the hang watch on a busy event loop', () => {
  it('keeps a connection whose answer arrived while the loop was blocked past the deadline', async () => {
    const watch = watchOf();
    const { socket, errors, answers } = await connected(watch);
    rmSync(answered, { force: true });
    socket.write('query');
    // Blocked past the deadline, and until the server has answered: on a busy machine the server
    // may get its turn late, and an answer that came after the block is rightly too late.
    const blockedAt = performance.now();
    while (performance.now() - blockedAt < 300 || !existsSync(answered)) {
      if (performance.now() - blockedAt > 20_000) throw new Error('the server never answered');
    }
    // Until the loop has read the answer or the watch has cut the connection: a fixed wait can end
    // in the timers' phase of a loop turn that has not read its sockets yet (a process descheduled
    // on a busy machine), and the check would then run before either could happen.
    for (const until = performance.now() + 10_000; answers.length === 0 && !socket.destroyed; ) {
      if (performance.now() > until) throw new Error('neither an answer nor a cut');
      await settle(10);
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
    await watch.close();
  });

  it('cuts a connection that got no answer by the deadline', async () => {
    const watch = watchOf();
    const { socket, errors } = await connected(watch);
    socket.write('silent');
    await settle(300);
    expect(socket.destroyed).toBe(true);
    expect(errors[0]).toBeInstanceOf(DatabaseHung);
    await watch.close();
  });
});

describe("the hang watch's check on a busy event loop", () => {
  /** A watch whose check answers after `turns` turns of the event loop (as a check that must connect first does). */
  function checkedWatch(turns: number | 'never', hangs: number[]): HangWatch {
    return new HangWatch({
      check: async () => {
        if (turns === 'never') return await new Promise(() => {});
        for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
      },
      resetCheck: async () => {},
      stallMs: 50,
      checkMs: 300,
      deadlineMs: 60_000,
      tickMs: 20,
      onHang: (dropped) => hangs.push(dropped),
    });
  }

  /** A connection past its start-up (it got an answer once), as the watch checks only those. */
  async function spokenTo(watch: HangWatch): Promise<Awaited<ReturnType<typeof connected>>> {
    const connection = await connected(watch);
    connection.socket.write('query');
    while (connection.answers.length === 0) await settle(10);
    return connection;
  }

  /** Keeps the loop busy 150 ms of every 170 (a saturated API) until stopped. */
  function saturate(): () => void {
    const timer = setInterval(() => blockLoop(150), 20);
    return () => clearInterval(timer);
  }

  it('does not call the database hung when its answer only needed more turns of a busy loop', async () => {
    const hangs: number[] = [];
    const watch = checkedWatch(4, hangs);
    const { socket, errors } = await spokenTo(watch);
    socket.write('silent');
    const stop = saturate();
    await settle(1_500);
    stop();
    expect(hangs).toEqual([]);
    expect(errors).toEqual([]);
    socket.destroy();
    await watch.close();
  });

  it('calls it hung, and cuts the waiting connection, when the check gets no answer on a quiet loop', async () => {
    const hangs: number[] = [];
    const watch = checkedWatch('never', hangs);
    const { socket, errors } = await spokenTo(watch);
    socket.write('silent');
    await settle(800);
    expect(hangs).toEqual([1]);
    expect(errors[0]).toBeInstanceOf(DatabaseHung);
    await watch.close();
  });
});

describe('the hang watch while the database hangs', () => {
  /** A watch whose check is answered only while `database.alive` (a frozen database: never answered). */
  function switchedWatch(database: { alive: boolean }, hangs: number[]): HangWatch {
    return new HangWatch({
      check: async () => {
        if (!database.alive) await new Promise(() => {});
      },
      resetCheck: async () => {},
      stallMs: 50,
      checkMs: 150,
      deadlineMs: 60_000,
      tickMs: 20,
      onHang: (dropped) => hangs.push(dropped),
    });
  }

  it('checks the database for a connection whose start-up gets no answer, and cuts it', async () => {
    const hangs: number[] = [];
    const watch = switchedWatch({ alive: false }, hangs);
    // Never answered, as a frozen database's start-up: the connect timeout would hold it 2 s.
    const { socket, errors } = await connected(watch);
    socket.write('silent');
    await settle(600);
    expect(hangs).toEqual([1]);
    expect(errors[0]).toBeInstanceOf(DatabaseHung);
    await watch.close();
  });

  it('cuts each new connection at once until the database answers a check again', async () => {
    const hangs: number[] = [];
    const database = { alive: false };
    const watch = switchedWatch(database, hangs);
    const first = await connected(watch);
    first.socket.write('silent');
    while (hangs.length === 0) await settle(10);

    // Made while the database hangs: cut before it can wait on anything.
    const during = watch.socket({ host: ['127.0.0.1'], port: [port] });
    const cut = await new Promise<unknown>((resolve) => during.once('error', resolve));
    expect(cut).toBeInstanceOf(DatabaseHung);

    // The database answers again: the next check (a tick later) says so, and connections live.
    database.alive = true;
    await settle(300);
    const after = await connected(watch);
    after.socket.write('query');
    await settle(100);
    expect(after.errors).toEqual([]);
    expect(after.answers.length).toBeGreaterThan(0);
    expect(hangs).toEqual([1]);
    after.socket.destroy();
    await watch.close();
  });
});
