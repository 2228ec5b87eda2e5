import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import { type Check, checkScorer, markerCount, showsInstruction } from './checks';
import type { RecordedCall } from './recordingModel';

/** The reply the local model opens with when the handoff instruction reached it. */
const HANDOFF_OPENING = '(after interruption)';

const hasInstruction = (call: RecordedCall) => call.prompt.some((message) => showsInstruction(message.text));

/** S5: the instruction reached the model exactly once, as a system instruction, for the claimed turn only. */
export const handoffOnce = checkScorer(
  'handoff-once',
  'The handoff instruction reached the model exactly once, as a system instruction, for the claimed turn only',
  (_input, { calls }) => {
    const claimed = calls.claimed;
    const checks: Check[] = [
      { name: 'the claimed turn called the model', ok: claimed.length > 0 },
      {
        name: 'each claimed call has the instruction as exactly one system message',
        ok: claimed.every(
          (call) =>
            call.system.filter((text) => text.includes(HANDOFF_INSTRUCTION)).length === 1 &&
            markerCount(call.prompt.map((message) => message.text).join('\n')) === 1,
        ),
      },
      {
        name: 'no user or assistant message of the claimed call holds any of it',
        ok: claimed.every((call) =>
          call.prompt.every((message) => message.role === 'system' || !showsInstruction(message.text)),
        ),
      },
      { name: 'the interrupted turn ran without it', ok: !calls.interrupted.some(hasInstruction) },
      {
        name: 'the next ordinary turn ran without it',
        ok: calls.followUp.length > 0 && !calls.followUp.some(hasInstruction),
      },
    ];
    return checks;
  },
);

/** S5: the interrupted partial reply is in context, marked interrupted; the queued message is last. */
export const partialInContext = checkScorer(
  'partial-in-context',
  'The interrupted partial reply is in the model context, marked as interrupted, and the queued message is the last user message',
  (_input, output) => {
    const call = output.calls.claimed[0];
    const prompt = call?.prompt ?? [];
    const last = prompt.at(-1);
    const beforeLast = prompt.at(-2);
    const partial = output.interrupted.visibleText.trim();
    const checks: Check[] = [
      {
        name: 'the interrupted turn settled as interrupted',
        ok: output.interrupted.status === 'interrupted',
      },
      { name: 'part of the interrupted reply had streamed', ok: partial.length > 0 },
      {
        name: 'the queued message is the last message, from the user',
        ok: last?.role === 'user' && last.text.trim() === output.queuedText,
      },
      {
        name: 'the partial reply, exactly as streamed, comes right before it',
        ok: beforeLast?.role === 'assistant' && beforeLast.text.trim() === partial,
      },
      {
        // The stored message stays as the person saw it; the call's system instruction names it.
        name: 'a system instruction of the call says the previous reply was interrupted and is incomplete',
        ok: (call?.system ?? []).some(
          (text) => /interrupted your previous reply/i.test(text) && /incomplete/i.test(text),
        ),
      },
      { name: 'the thread detail marks the partial reply as interrupted', ok: output.detailMarksInterrupted },
    ];
    return checks;
  },
);

/** S5: the instruction appears nowhere a person can see. */
export const instructionHidden = checkScorer(
  'instruction-hidden',
  'The instruction text is not in Mastra memory, the thread detail, the reply streams or the thread events',
  (_input, { surfaces }) => [
    { name: 'not in Mastra memory (recall and raw rows)', ok: !showsInstruction(surfaces.memory) },
    { name: 'not in the thread detail', ok: !showsInstruction(surfaces.threadDetail) },
    { name: 'not in any reply SSE chunk', ok: !showsInstruction(surfaces.replyStreams) },
    { name: 'not in the thread events SSE', ok: !showsInstruction(surfaces.threadEvents) },
  ],
);

/** S5, H1: nor in a share snapshot; "not run" until the API has shares. */
export const notInShare = checkScorer(
  'not-in-share',
  'The instruction text is not in a share snapshot of the thread',
  (_input, { share, claimed }) => {
    if (!share.built) return { notRun: 'no shares yet' };
    return [
      { name: `the share was created and read (HTTP ${share.status})`, ok: share.ok },
      // So that an empty snapshot cannot pass: it holds the reply (as a JSON string).
      {
        name: 'the snapshot holds the claimed reply',
        ok: share.text.includes(JSON.stringify(claimed.reply).slice(1, -1)),
      },
      { name: 'not in the share snapshot', ok: !showsInstruction(share.text) },
    ];
  },
);

/** The local model's reply shows it received the handoff; no reply echoes the instruction. */
export const replyShowsHandoff = checkScorer(
  'reply-shows-handoff',
  'The reply shows the model got the handoff (local model), and never echoes the instruction',
  (_input, output) => {
    const { reply } = output.claimed;
    const checks: Check[] = [
      {
        name: 'the claimed turn completed with a reply',
        ok: output.claimed.status === 'completed' && !!reply,
      },
      { name: 'the reply does not echo the instruction', ok: !showsInstruction(reply) },
      { name: 'the next reply does not echo the instruction', ok: !showsInstruction(output.followUpReply) },
    ];
    if (output.localModel) {
      checks.push(
        { name: `the reply opens with ${HANDOFF_OPENING}`, ok: reply.startsWith(HANDOFF_OPENING) },
        {
          name: `the next ordinary reply does not open with ${HANDOFF_OPENING}`,
          ok: !!output.followUpReply && !output.followUpReply.startsWith(HANDOFF_OPENING),
        },
      );
    }
    return checks;
  },
);

/** Every deterministic scorer; each must score 1.0 on every case. */
export const deterministicScorers = [
  handoffOnce,
  partialInContext,
  instructionHidden,
  notInShare,
  replyShowsHandoff,
];
