import type { LanguageModelV4 } from '@ai-sdk/provider';
import { runEvals } from '@mastra/core/evals';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';
import { languageModelOf, resolveChatModel } from '../src/agent/models';
import { configuredModels, type ModelSpec } from '../src/platform/modelList';
import { type CaseKind, caseKinds, type EvalCase, evalCases } from './cases';
import { type EvalEnvironment, type Sabotage, startEvalEnvironment } from './environment';
import { JUDGE_THRESHOLD, judgeScorer } from './judges';
import { type CaseInput, type CaseObservation, type InterruptMode, runCase } from './runCase';
import { deterministicScorers } from './scorers';

export const PROFILE_ID = 'chat-queue-interrupt-ci';

/**
 * The ways an interrupted reply hands over to the queued message that the profile runs, each
 * with every case (runCase.ts: interruptModes). The handoff follows every interrupt (S5), so
 * every case runs after Stop & send, after a plain Stop and Send now, and after a plain Stop and
 * a viewer's claim.
 */
export const profileModes: InterruptMode[] = [
  'stop-and-send',
  'stop-then-send-now',
  'stop-then-viewer-claim',
];

export const DETERMINISTIC_THRESHOLD = 1;

/** One scorer's outcome on one case: a score, or why it did not run. */
export type ScoreCell = { score: number; reason?: string } | { notRun: string };

export interface CaseRow {
  id: string;
  kind: CaseKind;
  mode: InterruptMode;
  scores: Record<string, ScoreCell>;
  passed: boolean;
}

export interface KindSummary {
  kind: CaseKind;
  cases: number;
  passedCases: number;
  /** Each scorer's average over the kind's cases against its threshold; absent when it never ran. */
  scorers: Record<string, { average: number; threshold: number; passed: boolean } | { notRun: string }>;
  passed: boolean;
  /** Why the kind could not be scored at all. */
  error?: string;
}

export interface ProfileResult {
  profile: string;
  model: string;
  judge: string | null;
  sabotage: Sabotage | null;
  /** Whether the API has shares, so that the share-snapshot check ran. */
  sharesBuilt: boolean;
  scorerIds: string[];
  rows: CaseRow[];
  kinds: KindSummary[];
  passed: boolean;
}

export interface ProfileOptions {
  databaseUrl: string;
  /** CHAT_MODELS (or CHAT_MODEL), their key variables, EVAL_JUDGE_MODEL, LOG_LEVEL. */
  env?: Record<string, string | undefined>;
  /** `--model`: the id of the configured model the cases run with (the default: the first). */
  model?: string;
  cases?: EvalCase[];
  modes?: InterruptMode[];
  /** Break the handoff on purpose (tests that show the profile can fail). */
  sabotage?: Sabotage;
}

/**
 * Runs every case (in every mode) through the API's services with `runEvals`, one run per kind so
 * each kind meets its thresholds on its own: 1.0 for the deterministic scorers, 0.9 for the judge.
 */
export async function runProfile(options: ProfileOptions): Promise<ProfileResult> {
  const { env, model } = withModel(options.env ?? {}, options.model);
  const judgeModel = judgeOf(env, model);
  const judge = judgeScorer(judgeModel?.model);
  const scorers = [...deterministicScorers, judge];
  const thresholdOf = (id: string) => (id === judge.id ? JUDGE_THRESHOLD : DETERMINISTIC_THRESHOLD);
  const cases = options.cases ?? evalCases;
  const modes = options.modes ?? profileModes;

  const environment = await startEvalEnvironment({
    databaseUrl: options.databaseUrl,
    env,
    sabotage: options.sabotage,
  });
  const rows: CaseRow[] = [];
  const kinds: KindSummary[] = [];
  try {
    const target = caseWorkflow(environment);
    for (const kind of caseKinds) {
      const data = cases
        .filter((item) => item.kind === kind)
        .flatMap((item) => modes.map((mode) => ({ input: { ...item, mode } satisfies CaseInput })));
      if (data.length === 0) continue;
      const kindRows: CaseRow[] = [];
      let result: Awaited<ReturnType<typeof runEvals>>;
      try {
        result = await runEvals({
          target,
          data,
          scorers: scorers.map((scorer) => ({ scorer, threshold: thresholdOf(scorer.id) })),
          onItemComplete: ({ item, scorerResults }) => {
            kindRows.push(toRow(item.input as CaseInput, scorerResults, thresholdOf));
          },
        });
      } catch (error) {
        // A scorer that throws (a judge that does not answer, say) fails the kind; it never passes it.
        rows.push(...kindRows);
        kinds.push({
          kind,
          cases: data.length,
          passedCases: 0,
          scorers: {},
          passed: false,
          error: messageOf(error),
        });
        continue;
      }
      rows.push(...kindRows);
      const summary: KindSummary['scorers'] = {};
      for (const scorer of scorers) {
        const threshold = result.thresholdResults?.find((entry) => entry.id === scorer.id);
        summary[scorer.id] = threshold
          ? { average: threshold.averageScore, threshold: thresholdOf(scorer.id), passed: threshold.passed }
          : { notRun: notRunReason(kindRows, scorer.id) };
      }
      kinds.push({
        kind,
        cases: kindRows.length,
        passedCases: kindRows.filter((row) => row.passed).length,
        scorers: summary,
        // runEvals' verdict is "passed" only when every threshold that ran was met.
        passed: result.verdict === 'passed' && kindRows.every((row) => row.passed),
      });
    }
  } finally {
    await environment.close();
  }
  return {
    profile: PROFILE_ID,
    model: model.id,
    judge: judgeModel?.name ?? null,
    sabotage: options.sabotage ?? null,
    sharesBuilt: environment.sharesBuilt,
    scorerIds: scorers.map((scorer) => scorer.id),
    rows,
    kinds,
    passed: kinds.length > 0 && kinds.every((kind) => kind.passed),
  };
}

/** A Mastra workflow whose one step drives a case; runEvals runs it per data item. */
function caseWorkflow(environment: EvalEnvironment) {
  const input = z.custom<CaseInput>();
  const output = z.custom<CaseObservation>();
  const step = createStep({
    id: 'run-case',
    inputSchema: input,
    outputSchema: output,
    execute: async ({ inputData }) => {
      try {
        return await runCase(environment, inputData);
      } catch (error) {
        return { error: messageOf(error) } as CaseObservation;
      }
    },
  });
  return createWorkflow({ id: PROFILE_ID, inputSchema: input, outputSchema: output }).then(step).commit();
}

interface ScorerResult {
  score?: number;
  reason?: string;
  notScorable?: { reason?: string };
}

function toRow(input: CaseInput, results: Record<string, ScorerResult>, thresholdOf: (id: string) => number) {
  const scores: Record<string, ScoreCell> = {};
  let passed = true;
  for (const [id, result] of Object.entries(results)) {
    if (result.notScorable || typeof result.score !== 'number') {
      scores[id] = { notRun: result.notScorable?.reason ?? 'not scored' };
      continue;
    }
    scores[id] = { score: result.score, ...(result.reason ? { reason: result.reason } : {}) };
    if (result.score < thresholdOf(id)) passed = false;
  }
  return { id: input.id, kind: input.kind, mode: input.mode, scores, passed };
}

function notRunReason(rows: CaseRow[], scorerId: string): string {
  for (const row of rows) {
    const cell = row.scores[scorerId];
    if (cell && 'notRun' in cell) return cell.notRun;
  }
  return 'not scored';
}

/**
 * `env` for the run, with the model it runs with: `--model` puts that entry of CHAT_MODELS first
 * (the default every case's chat gets); without it, the first entry. An id CHAT_MODELS does not
 * offer stops the run before anything starts.
 */
export function withModel(
  env: Record<string, string | undefined>,
  id: string | undefined,
): { env: Record<string, string | undefined>; model: ModelSpec } {
  const models = configuredModels(
    {
      chatModels: env.CHAT_MODELS,
      chatModel: env.CHAT_MODEL?.trim() || 'local',
      openaiApiKey: env.OPENAI_API_KEY,
      openaiBaseUrl: env.OPENAI_BASE_URL,
    },
    env,
  );
  const chosen = id === undefined ? models[0] : models.find((model) => model.id === id);
  if (!chosen)
    throw new Error(
      `--model ${id}: not a configured model (offered: ${models.map((model) => model.id).join(', ')})`,
    );
  if (id === undefined || !env.CHAT_MODELS?.trim()) return { env, model: chosen };
  // Entries and models are in the same order: the chosen entry moves to the front as written.
  const entries = env.CHAT_MODELS.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const index = models.indexOf(chosen);
  const reordered = [entries[index], ...entries.filter((_, at) => at !== index)];
  return { env: { ...env, CHAT_MODELS: reordered.join(',') }, model: chosen };
}

/**
 * The judge: EVAL_JUDGE_MODEL (`openai:<model>` with OPENAI_API_KEY / OPENAI_BASE_URL), else the
 * model the run uses when it is a real one; the local model never judges.
 */
function judgeOf(
  env: Record<string, string | undefined>,
  model: ModelSpec,
): { name: string; model: LanguageModelV4 } | undefined {
  const named = env.EVAL_JUDGE_MODEL?.trim();
  if (named?.startsWith('openai:')) return { name: named, model: resolveJudge(named, env) };
  return model.kind === 'openai' ? { name: model.id, model: languageModelOf(model, 0) } : undefined;
}

function resolveJudge(name: string, env: Record<string, string | undefined>): LanguageModelV4 {
  return resolveChatModel({
    chatModel: name,
    openaiApiKey: env.OPENAI_API_KEY,
    openaiBaseUrl: env.OPENAI_BASE_URL,
    localModelDelayMs: 0,
  });
}

/** An error's message with its causes (MastraError wraps the scorer's own error). */
function messageOf(error: unknown): string {
  const parts: string[] = [];
  for (let current = error; current && parts.length < 4; current = (current as { cause?: unknown }).cause) {
    parts.push(current instanceof Error ? current.message : String(current));
  }
  return parts.join(': ');
}
