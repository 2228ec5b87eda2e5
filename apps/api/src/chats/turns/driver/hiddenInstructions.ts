import { summaryForModel } from '../../../agent/contextSummary';
import { HANDOFF_INSTRUCTION } from '../../../agent/handoffInstruction';
import { steerReminder } from '../../../agent/steerReminder';
import type { DriverTurn } from './types';

/**
 * What a started run's model call gets after the built-in instructions, hidden (never stored,
 * never shown), for this run only; one home for every driver. M4: the person's own instructions
 * come first. C3: a compaction's summary stands in for the messages before the branch's marker.
 * S5: the interrupt handoff. A steer that missed the reply it was sent into runs as a turn of its
 * own, with the steer reminder.
 */
export function hiddenInstructions(turn: Pick<DriverTurn, 'instructions' | 'history' | 'message'>): string[] {
  const { instructions, history, message } = turn;
  return [
    ...(instructions.custom ? [instructions.custom] : []),
    ...(history.summary !== null ? [summaryForModel(history.summary)] : []),
    ...(instructions.handoff ? [HANDOFF_INSTRUCTION] : []),
    ...(instructions.lateSteer ? [steerReminder([message.text], { late: true })] : []),
  ];
}
