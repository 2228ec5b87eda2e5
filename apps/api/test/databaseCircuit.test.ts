import { describe, expect, it } from 'vitest';
import { DatabaseCircuit } from '../src/platform/databaseCircuit';
import { ApiError } from '../src/platform/errors';
import { createLogger } from '../src/platform/logger';
import { databaseReadiness } from '../src/platform/readiness';
import { waitFor } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
useTestApi((started) => {
  ({ api } = started);
});

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function circuitWith(answers: { up: boolean; probes: number }) {
  return new DatabaseCircuit({
    logger: createLogger('silent'),
    probeIntervalMs: 20,
    probe: async () => {
      answers.probes += 1;
      if (!answers.up) throw refused;
    },
  });
}

describe('the database circuit', () => {
  it('opens on the first connection error, answers 503 with Retry-After while open, and closes once a probe answers', async () => {
    const database = { up: false, probes: 0 };
    const circuit = circuitWith(database);
    expect(() => circuit.assertClosed()).not.toThrow();
    expect(circuit.recordFailure(refused)).toBe(true);
    expect(circuit.isOpen).toBe(true);
    const refusal = (() => {
      try {
        circuit.assertClosed();
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('unavailable');
    expect((refusal as ApiError).headers?.['retry-after']).toBeDefined();
    // It keeps probing while the database is away ...
    await waitFor(
      async () => database.probes,
      (probes) => probes >= 3,
      2_000,
    );
    expect(circuit.isOpen).toBe(true);
    // ... and closes on the first probe that answers.
    database.up = true;
    await waitFor(
      async () => circuit.isOpen,
      (open) => !open,
      2_000,
    );
    circuit.stop();
  });

  it('stays closed for errors that are not about reaching the database', () => {
    const circuit = circuitWith({ up: true, probes: 0 });
    const syntax = Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' });
    expect(circuit.recordFailure(syntax)).toBe(false);
    expect(circuit.recordFailure(new ApiError('not_found'))).toBe(false);
    expect(circuit.isOpen).toBe(false);
    circuit.stop();
  });
});

describe('ready means ready', () => {
  it('closes the open circuit when the readiness query answers, so the request after a 200 from /api/ready is served', async () => {
    // The database is back, but the circuit's next probe is a minute away (its first one met the outage).
    const circuit = new DatabaseCircuit({
      logger: createLogger('silent'),
      probeIntervalMs: 60_000,
      probeTimeoutMs: 50,
      probe: () => new Promise(() => {}),
    });
    expect(circuit.recordFailure(refused)).toBe(true);
    await waitFor(
      async () => circuit.isOpen,
      (open) => open,
      1_000,
    );
    await databaseReadiness(api.runtime.database.sql, circuit)();
    expect(circuit.isOpen).toBe(false);
    expect(() => circuit.assertClosed()).not.toThrow();
    circuit.stop();
  });
});
