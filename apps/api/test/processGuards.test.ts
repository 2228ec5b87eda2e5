import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger';
import { installProcessGuards } from '../src/platform/processGuards';

/**
 * The last-resort guard of the API process, given the errors it meets during database outages.
 * Installed in this test process; its `uncaughtException` listener is called with each error as
 * Node would call it (not emitted: the test runner listens too), and taken off after each test.
 */
const lines: Array<{ level: number; msg: string; err?: { stack?: string } }> = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

let before: { exception: NodeJS.UncaughtExceptionListener[]; rejection: NodeJS.UnhandledRejectionListener[] };
let guard: NodeJS.UncaughtExceptionListener;

beforeEach(() => {
  lines.length = 0;
  before = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  installProcessGuards(createLogger('info', capture));
  const added = process
    .listeners('uncaughtException')
    .find((listener) => !before.exception.includes(listener));
  if (!added) throw new Error('the guard added no uncaughtException listener');
  guard = added;
});

afterEach(() => {
  for (const listener of process.listeners('uncaughtException'))
    if (!before.exception.includes(listener)) process.off('uncaughtException', listener);
  for (const listener of process.listeners('unhandledRejection'))
    if (!before.rejection.includes(listener)) process.off('unhandledRejection', listener);
});

/** An error as thrown from `frame` (its stack written as Node writes one). */
function thrownAt<E extends Error>(error: E, frame: string): E {
  error.stack = `${error.name}: ${error.message}\n    at ${frame}\n    at process.processImmediate (node:internal/timers:574:21)`;
  return error;
}

const DRIVER_WRITE =
  'Immediate.nextWrite (file:///srv/app/node_modules/.pnpm/postgres@3.4.9/node_modules/postgres/src/connection.js:255:22)';

describe('the process guard during database outages', () => {
  it("logs postgres.js's write to a closed connection as one warning line, without a stack, and stays up", () => {
    const error = thrownAt(new TypeError("Cannot read properties of null (reading 'write')"), DRIVER_WRITE);
    guard(error, 'uncaughtException');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.err).toBeUndefined();
    expect(JSON.stringify(lines[0])).not.toContain('connection.js');
  });

  it('still logs anything else the driver throws as an error, whole', () => {
    const error = thrownAt(
      new TypeError("Cannot read properties of undefined (reading 'type')"),
      DRIVER_WRITE,
    );
    guard(error, 'uncaughtException');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(50);
    expect(lines[0]?.err?.stack).toContain('connection.js');
  });

  it('does not take the same words from code of its own for the driver', () => {
    const error = thrownAt(
      new TypeError("Cannot read properties of null (reading 'write')"),
      'nextWrite (file:///srv/app/apps/api/src/platform/http.ts:10:5)',
    );
    let exited: number | undefined;
    const exit = process.exit;
    process.exit = ((code?: number) => {
      exited = code;
    }) as typeof process.exit;
    try {
      guard(error, 'uncaughtException');
    } finally {
      process.exit = exit;
    }
    expect(exited).toBe(1);
    expect(lines[0]?.level).toBe(60);
  });
});
