import { createScorer, notScorable } from '@mastra/core/evals';
import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import type { CaseInput, CaseObservation } from './runCase';

/** One yes/no fact a deterministic scorer checks. */
export interface Check {
  name: string;
  ok: boolean;
}

/** What a check function returns: its checks, or why the scorer has nothing to check in this run. */
export type CheckOutcome = Check[] | { notRun: string };

/**
 * A deterministic scorer: the share of its checks that hold (1.0 when all do), with the failed
 * ones as the reason. A case that could not be driven to the end scores 0 on every scorer.
 */
export function checkScorer(
  id: string,
  description: string,
  check: (input: CaseInput, output: CaseObservation) => CheckOutcome,
) {
  return createScorer({ id, description })
    .preprocess(({ run }) => {
      const output = run.output as CaseObservation | undefined;
      if (!output || output.error) {
        return { checks: [{ name: `the case ran (${output?.error ?? 'no output'})`, ok: false }] };
      }
      const outcome = check(run.input as CaseInput, output);
      if ('notRun' in outcome) return notScorable(outcome.notRun);
      return { checks: outcome };
    })
    .generateScore(({ results }) => {
      const { checks } = results.preprocessStepResult;
      return checks.filter((item) => item.ok).length / checks.length;
    })
    .generateReason(({ results }) => {
      const failed = results.preprocessStepResult.checks.filter((item) => !item.ok);
      return failed.length === 0
        ? 'all checks hold'
        : `failed: ${failed.map((item) => item.name).join('; ')}`;
    });
}

/**
 * Pieces of the hidden instruction that must never show anywhere a person can read: its first
 * line and each of its sentences. Text is compared per piece, so a leak is found inside JSON and
 * in any line layout.
 */
const instructionPieces = HANDOFF_INSTRUCTION.split('\n')
  .flatMap((line) => line.replace(/^-\s*/, '').split(/(?<=\.)\s+/))
  .map((piece) => piece.trim())
  .filter((piece) => piece.length > 0);

export function showsInstruction(text: string): boolean {
  return instructionPieces.some((piece) => text.includes(piece));
}

const MARKER = /Interrupt handoff:/g;

export function markerCount(text: string): number {
  return text.match(MARKER)?.length ?? 0;
}
