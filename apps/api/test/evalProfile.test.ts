import type { TestDatabase } from '@chat/db/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseKinds, evalCases } from '../evals/cases';
import type { Sabotage } from '../evals/environment';
import { type ProfileResult, profileModes, runProfile, withModel } from '../evals/profile';
import { formatReport } from '../evals/report';
import { deterministicScorers } from '../evals/scorers';
import { freshDatabase } from './support/testApi';

/**
 * The chat-queue-interrupt-ci eval profile (S6) with the built-in local model: every case must
 * score 1.0 on every deterministic scorer, and breaking the handoff on purpose must fail it.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database?.drop();
});

// The local model, whatever the environment of the test run says.
const localOnly = { CHAT_MODEL: 'local' };
const deterministicIds = deterministicScorers.map((scorer) => scorer.id);

function scoresOf(result: ProfileResult, scorerId: string): Array<number | 'not run'> {
  return result.rows.map((row) => {
    const cell = row.scores[scorerId];
    return cell && 'score' in cell ? cell.score : 'not run';
  });
}

describe('the chat-queue-interrupt-ci profile', () => {
  it('has at least 4 cases of each kind, with distinct interruption points', () => {
    for (const kind of caseKinds) {
      const cases = evalCases.filter((item) => item.kind === kind);
      expect(cases.length, kind).toBeGreaterThanOrEqual(4);
      expect(new Set(cases.map((item) => item.interruptAfterWords)).size, kind).toBe(cases.length);
    }
  });

  it(
    'scores 1.0 on every deterministic scorer for every case, and reports the judge as not run',
    async () => {
      const result = await runProfile({ databaseUrl: database.url, env: localOnly });
      const report = formatReport(result);

      expect(result.rows).toHaveLength(evalCases.length * profileModes.length);
      // Every deterministic scorer ran (the share check included) and scored 1.0 on every case.
      expect(result.sharesBuilt).toBe(true);
      for (const id of deterministicIds) {
        const scores = scoresOf(result, id);
        expect(scores, `${id}\n${report}`).toEqual(scores.map(() => 1));
      }
      expect(scoresOf(result, 'judge').every((score) => score === 'not run')).toBe(true);
      expect(result.kinds.map((kind) => kind.kind)).toEqual([...caseKinds]);
      expect(result.passed, report).toBe(true);
      expect(report).toContain('judge not run (no judge model');
      expect(report).toContain('PASSED');
    },
    // Generous: the machine running the suite may be busy, and each case streams for real.
    60_000 + evalCases.length * profileModes.length * 8_000,
  );

  const broken: Array<[Sabotage, string]> = [
    ['skip-handoff', 'handoff-once'],
    ['leak-into-memory', 'instruction-hidden'],
    ['handoff-on-every-turn', 'handoff-once'],
  ];
  it.each(broken)(
    'fails when the handoff is broken on purpose (%s)',
    async (sabotage, failingScorer) => {
      const result = await runProfile({
        databaseUrl: database.url,
        env: localOnly,
        sabotage,
        cases: evalCases.filter((item) => item.id === 'clarification-1' || item.id === 'reveal-or-change-2'),
      });
      expect(result.passed).toBe(false);
      expect(result.rows.every((row) => !row.passed)).toBe(true);
      expect(scoresOf(result, failingScorer).every((score) => typeof score === 'number' && score < 1)).toBe(
        true,
      );
      expect(result.kinds.every((kind) => !kind.passed)).toBe(true);
      expect(formatReport(result)).toContain('FAILED');
    },
    60_000,
  );
});

describe('the profile with a chosen model (pnpm eval --model)', () => {
  const twoModels = { CHAT_MODELS: 'local;label=Local,local;id=local-b;label=Local B' };

  it('puts the chosen entry first, and refuses an id the configuration does not offer', () => {
    expect(withModel(twoModels, 'local-b').env.CHAT_MODELS).toBe(
      'local;id=local-b;label=Local B,local;label=Local',
    );
    expect(withModel(twoModels, undefined).model.id).toBe('local');
    expect(withModel({ CHAT_MODEL: 'local' }, undefined).model.id).toBe('local');
    expect(() => withModel(twoModels, 'gpt-9')).toThrow(
      '--model gpt-9: not a configured model (offered: local, local-b)',
    );
  });

  it(
    'runs every case with that model: the turns record it',
    async () => {
      // This file's database (Mastra creates its schema once per process): the run's own turns are
      // the ones created after it started.
      const startedAt = new Date();
      const result = await runProfile({
        databaseUrl: database.url,
        env: twoModels,
        model: 'local-b',
        cases: evalCases.filter((item) => item.id === 'clarification-1'),
      });
      expect(result.model).toBe('local-b');
      expect(result.judge).toBeNull();
      expect(result.passed, formatReport(result)).toBe(true);
      const sql = postgres(database.url, { max: 1 });
      try {
        const rows = await sql<{ model: string | null }[]>`
          select distinct model from chat_turn_requests where created_at >= ${startedAt}`;
        expect(rows.map((row) => row.model)).toEqual(['local-b']);
      } finally {
        await sql.end();
      }
    },
    60_000 + profileModes.length * 8_000,
  );
});
