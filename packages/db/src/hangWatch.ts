import { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface HangWatchOptions {
  /** Asks the database something trivial on a connection of its own; rejects or never settles when it hangs. */
  check: () => Promise<unknown>;
  /** Ends whatever `check` holds after a check that got no answer (the next check connects again). */
  resetCheck: () => Promise<unknown>;
  /** A connection that has waited this long for an answer gets the database checked. */
  stallMs: number;
  /** A check not answered by then means the database hangs. */
  checkMs: number;
  /** The longest any connection waits for an answer, database alive or not. */
  deadlineMs: number;
  /** How often waiting connections are looked at while any wait, and the database asked again while it hangs. */
  tickMs?: number;
  /** Told each time a hang is found (`dropped`: how many connections were cut). */
  onHang?: (dropped: number) => void;
}

/** The error a statement meets when its connection was cut because the database did not answer. */
export class DatabaseHung extends Error {
  readonly code = 'DATABASE_HUNG';
  constructor() {
    super('the database did not answer in time; its connection was dropped');
  }
}

/** Above this share of a check's wait spent busy, the event loop, not the database, may be why it went unanswered. */
const BUSY_LOOP = 0.5;
/** How many more waits a check gets while the event loop is that busy. */
const BUSY_LOOP_WAITS = 3;

/** A watched connection: since when it waits for an answer (its start-up's included). */
interface Watched {
  waitingSince: number | undefined;
}

/**
 * The client-side deadline of every statement, for a database that hangs (stopped, frozen, its host
 * gone quiet) rather than goes away: such a database enforces nothing, not its own statement
 * timeout, and closes nothing, so a statement would wait as long as the hang lasts.
 *
 * Both drivers make their connections through `socket()`/`stream()`, and the watch notes when a
 * connection sent something and is waiting for the answer (cleared by PostgreSQL's ReadyForQuery,
 * which ends every answer). A connection that has waited `stallMs` gets the database checked with a
 * trivial query on a connection of its own, bounded by `checkMs`. Answered: the database is alive
 * and the statement merely slow, it goes on (its server-side statement timeout still bounds it).
 * Not answered: the database hangs, and every connection is cut, so each statement on one fails at
 * once with a connection error (`DatabaseHung`, which callers treat as an outage: a `503`, a write
 * retried when the database is back). Until a check is answered again (asked every `tickMs`), a new
 * connection is cut as soon as it is made: a statement queued for one fails at once instead of
 * waiting out the connect timeout against a database that takes connections and never answers.
 * Whatever the check says, no connection waits longer than `deadlineMs`.
 *
 * A connection cut mid-statement is like one cut by a network fault: a transaction that had not
 * sent its COMMIT is rolled back by the server when it resumes; one whose COMMIT was on its way may
 * still commit (the callers that must say so use `commitOrSayUnsure`).
 *
 * Only plain TCP and Unix-socket connections are watched: a connection upgraded to TLS writes and
 * reads below the socket the watch sees, so it keeps the connect timeout and the server's statement
 * timeout only.
 */
export class HangWatch {
  private readonly watched = new Map<Socket, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** The last check went unanswered: connections are cut as they are made, until one is answered. */
  private hung = false;
  /** A judgement of the waiting connections is scheduled for after this turn's I/O. */
  private judging = false;
  /** When the last check that the database answered began. */
  private aliveAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private readonly tickMs: number;
  /**
   * Writes to the watched connections so far (each one a statement or a pipeline of them, so about
   * one round trip): how many a request makes is counted from it (`sendRoundTrips.test.ts`).
   */
  writes = 0;

  constructor(private readonly options: HangWatchOptions) {
    this.tickMs = options.tickMs ?? 250;
  }

  /** A socket for postgres.js's `socket` option (it expects one already connecting). */
  readonly socket = (options: { path?: string | false; host: string[]; port: number[] }): Socket => {
    const socket = this.watch();
    if (options.path) socket.connect(options.path);
    else socket.connect(options.port[0] ?? 5432, options.host[0] ?? 'localhost');
    return socket;
  };

  /** A socket for node-postgres's `stream` option (it connects it itself). */
  readonly stream = (): Socket => this.watch();

  /** Stops watching (shutdown) and ends the check's connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.options.resetCheck().catch(() => {});
  }

  private watch(): Socket {
    const state: Watched = { waitingSince: undefined };
    // Whatever a driver writes expects an answer (a query, a sync, the start-up message).
    const socket = new WatchedSocket(() => {
      this.writes++;
      state.waitingSince ??= performance.now();
    });
    this.watched.set(socket, state);
    socket.on('data', (data: Buffer) => {
      if (endsWithReadyForQuery(data)) state.waitingSince = undefined;
      // Part of an answer: the database is talking, the wait starts again.
      else if (state.waitingSince !== undefined) state.waitingSince = performance.now();
    });
    socket.once('close', () => this.watched.delete(socket));
    // Cut once the driver has had the socket and put its listeners on (it may await it first).
    if (this.hung) setImmediate(() => this.cutWhileHung(socket));
    this.startTicking();
    return socket;
  }

  private startTicking(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  private tick(): void {
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    // Judged after this turn of the event loop has read its sockets: a tick that comes late (a loop
    // busy with other work, the timers run first) must not cut a connection whose answer has
    // already arrived and only waits to be read.
    if (this.judging) return;
    this.judging = true;
    this.judgeAfterReads(performance.now());
  }

  /**
   * Judges in this turn's check phase, after its sockets were read; but when the loop stalled
   * since `scheduledAt` (the judgement was scheduled before a long stretch of other work), the
   * answers that came in meanwhile are read only in the next turn's poll, after this check phase:
   * the judgement then waits one more turn (a few at most, so a loop that stays saturated is
   * still judged).
   */
  private judgeAfterReads(scheduledAt: number, waits = 0): void {
    setImmediate(() => {
      const now = performance.now();
      if (now - scheduledAt > this.tickMs && waits < BUSY_LOOP_WAITS) {
        this.judgeAfterReads(now, waits + 1);
        return;
      }
      this.judging = false;
      if (!this.closed) this.judge();
    });
  }

  private judge(): void {
    const now = performance.now();
    let stalled = false;
    for (const [socket, state] of this.watched) {
      if (state.waitingSince === undefined) continue;
      const waited = now - state.waitingSince;
      if (waited >= this.options.deadlineMs) {
        socket.destroy(new DatabaseHung());
        this.options.onHang?.(1);
      } else if (waited >= this.options.stallMs) stalled = true;
    }
    // One check at a time; a database that answered a check begun after the stall began is alive.
    if (stalled && !this.checking && now - this.aliveAt >= this.options.stallMs) {
      this.checking = this.check().finally(() => {
        this.checking = undefined;
      });
    }
  }

  /**
   * Checks the database; unanswered, cuts every connection and asks again every tick until it
   * answers (connections made meanwhile are cut as they are made).
   */
  private async check(): Promise<void> {
    for (;;) {
      const startedAt = performance.now();
      if (await this.answers()) {
        this.aliveAt = startedAt;
        this.hung = false;
        return;
      }
      if (this.closed) return;
      await this.options.resetCheck().catch(() => {});
      let dropped = 0;
      for (const socket of this.watched.keys()) {
        this.cut(socket);
        dropped++;
      }
      if (!this.hung) {
        this.hung = true;
        this.options.onHang?.(dropped);
      }
      await new Promise((resolve) => setTimeout(resolve, this.tickMs).unref());
      if (this.closed) return;
    }
  }

  /** Whether the check is answered within its wait (longer while the event loop is busy). */
  private async answers(): Promise<boolean> {
    let answered = false;
    const asked = this.options.check().then(
      () => {
        answered = true;
      },
      () => {},
    );
    for (let waits = 0; ; waits++) {
      const loopBefore = performance.eventLoopUtilization();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.checkMs);
      });
      await Promise.race([asked, late]);
      clearTimeout(timer);
      // The deadline's timer may have fired after an event loop busy with other work: an answer
      // that already arrived gets its turn (I/O is read before `setImmediate` runs) before the
      // database is called hung.
      if (!answered) await new Promise((resolve) => setImmediate(resolve));
      // A loop busy for most of the wait had little time to hear the answer (a check that must
      // connect first needs several turns of it): the API, not the database, was slow. It waits
      // again, a few times at most, before the database is called hung.
      if (answered || waits >= BUSY_LOOP_WAITS) return answered;
      if (performance.eventLoopUtilization(loopBefore).utilization < BUSY_LOOP) return answered;
    }
  }

  private cut(socket: Socket): void {
    socket.destroy(new DatabaseHung());
  }

  private cutWhileHung(socket: Socket): void {
    if (this.hung && !socket.destroyed) this.cut(socket);
  }
}

/**
 * A socket that tells when something is written to it. Not a wrapped `write`: `Socket#connect`
 * puts the prototype's `write` back on the instance; these two are what every write goes through.
 */
class WatchedSocket extends Socket {
  constructor(private readonly written: () => void) {
    super();
  }

  override _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.written();
    super._write(chunk, encoding, callback);
  }

  override _writev(
    chunks: Array<{ chunk: unknown; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void,
  ): void {
    this.written();
    super._writev?.(chunks, callback);
  }
}

/** PostgreSQL's ReadyForQuery ('Z', length 5, transaction status) ends every answer. */
function endsWithReadyForQuery(data: Buffer): boolean {
  const at = data.length - 6;
  return at >= 0 && data[at] === 0x5a && data.readInt32BE(at + 1) === 5;
}
