import { type TurnStatus, turnStatuses } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { assertTransition, canTransition } from '../src/chats/turns/lifecycle';
import { InvariantError } from '../src/platform/errors';

/** Every legal move of a turn, written out independently of the table it checks. */
const legalMoves: Array<[TurnStatus, TurnStatus]> = [
  ['queued', 'running'],
  ['queued', 'cancelled'],
  ['running', 'completed'],
  ['running', 'interrupted'],
  ['running', 'failed'],
  ['running', 'awaiting_approval'],
  ['running', 'settling'],
  ['settling', 'completed'],
  ['settling', 'interrupted'],
  ['settling', 'failed'],
  ['awaiting_approval', 'running'],
  ['awaiting_approval', 'interrupted'],
  ['failed', 'running'],
  ['failed', 'queued'],
  ['failed', 'cancelled'],
  ['steer_pending', 'delivered'],
  ['steer_pending', 'queued'],
  ['steer_pending', 'cancelled'],
];

const isLegal = (from: TurnStatus, to: TurnStatus) =>
  legalMoves.some(([legalFrom, legalTo]) => legalFrom === from && legalTo === to);

describe('the turn transition table', () => {
  it.each(legalMoves)('allows %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransition(from, to)).not.toThrow();
  });

  it('refuses a finished turn running again with the invariant error', () => {
    expect(canTransition('completed', 'running')).toBe(false);
    expect(() => assertTransition('completed', 'running')).toThrow(InvariantError);
    expect(() => assertTransition('completed', 'running')).toThrow(
      'illegal turn transition completed -> running',
    );
  });

  it('refuses every move that is not listed', () => {
    const illegal = turnStatuses.flatMap((from) =>
      turnStatuses.filter((to) => !isLegal(from, to)).map((to) => [from, to] as const),
    );
    expect(illegal).toHaveLength(turnStatuses.length ** 2 - legalMoves.length);
    for (const [from, to] of illegal) {
      expect(canTransition(from, to), `${from} -> ${to}`).toBe(false);
      expect(() => assertTransition(from, to), `${from} -> ${to}`).toThrow(InvariantError);
    }
  });
});
