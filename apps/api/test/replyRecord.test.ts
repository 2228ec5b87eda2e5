import { describe, expect, it } from 'vitest';
import { ReplyRecord } from '../src/chats/turns/replyRecord';

/**
 * The runner's own record of a reply, in memory's message shape: what is written when a save
 * failed or a run was cut off, and what a checkpoint holds. Pure: chunks in, messages out.
 */
const at = new Date('2030-01-01T00:00:00.000Z');

function toolSteps(record: ReplyRecord): void {
  record.take({ type: 'start', messageId: 'reply-1' }, at);
  record.take({ type: 'start-step' }, at);
  record.take(
    { type: 'tool-input-available', toolCallId: 'call-1', toolName: 'current_time', input: {} },
    at,
  );
  record.take({ type: 'tool-output-available', toolCallId: 'call-1', output: { now: 'noon' } }, at);
  record.take({ type: 'finish-step' }, at);
  record.take({ type: 'start-step' }, at);
  record.take({ type: 'text-start', id: 't' }, at);
  record.take({ type: 'text-delta', id: 't', delta: 'It is ' }, at);
  record.take({ type: 'text-delta', id: 't', delta: 'noon.' }, at);
}

describe('the reply record', () => {
  it('records text and tool steps as memory stores them', () => {
    const record = ReplyRecord.empty();
    toolSteps(record);
    expect(record.all).toEqual([
      {
        id: 'reply-1',
        role: 'assistant',
        createdAt: at.toISOString(),
        parts: [
          {
            type: 'tool-invocation',
            toolInvocation: {
              state: 'result',
              toolCallId: 'call-1',
              toolName: 'current_time',
              args: {},
              result: { now: 'noon' },
            },
          },
          { type: 'step-start' },
          { type: 'text', text: 'It is noon.' },
        ],
      },
    ]);
    expect(record.currentText).toBe('It is noon.');
    expect(record.finishedToolCalls).toEqual(['call-1']);
    expect(record.structured).toBe(true);
  });

  it('puts steers between the reply so far and its continuation, in order', () => {
    const record = ReplyRecord.empty();
    record.take({ type: 'start', messageId: 'reply-1' }, at);
    record.take({ type: 'text-delta', id: 't', delta: 'Before.' }, at);
    record.takeSteers(
      [
        { turnId: 'steer-a', messageId: 'user-a', text: 'first' },
        { turnId: 'steer-b', messageId: 'user-b', text: 'second' },
      ],
      'reply-2',
      at,
    );
    // The stream's own start is not a new message once the continuation is open.
    record.take({ type: 'start', messageId: 'reply-1' }, at);
    record.take({ type: 'text-delta', id: 't', delta: 'After.' }, at);
    expect(record.all.map((message) => [message.id, message.role, message.createdAt])).toEqual([
      ['reply-1', 'assistant', '2030-01-01T00:00:00.000Z'],
      ['user-a', 'user', '2030-01-01T00:00:00.000Z'],
      ['user-b', 'user', '2030-01-01T00:00:00.001Z'],
      ['reply-2', 'assistant', '2030-01-01T00:00:00.002Z'],
    ]);
    expect(record.currentId).toBe('reply-2');
    expect(record.currentText).toBe('After.');
    expect(record.text).toBe('Before.After.');
  });

  it('rebuilds a reply from its checkpoint: the messages at the last step end and the text since', () => {
    const record = ReplyRecord.empty();
    toolSteps(record);
    const snapshot = record.snapshot();
    // The text went on after the step end; only the text was checkpointed since.
    const restored = ReplyRecord.restore(snapshot, { id: 'reply-1', text: 'It is noon. And a bit.' });
    expect(restored.currentText).toBe('It is noon. And a bit.');
    expect(restored.all[0]?.parts.map((part) => part.type)).toEqual([
      'tool-invocation',
      'step-start',
      'text',
    ]);
    // A checkpoint with text only (no step ended yet) is one message.
    const textOnly = ReplyRecord.restore(null, { id: 'reply-9', text: 'Hello' }, at);
    expect(textOnly.all).toEqual([
      {
        id: 'reply-9',
        role: 'assistant',
        createdAt: at.toISOString(),
        parts: [{ type: 'text', text: 'Hello' }],
      },
    ]);
    // The snapshot is a copy: the record growing later does not change it.
    record.take({ type: 'text-delta', id: 't', delta: ' Later.' }, at);
    expect(ReplyRecord.restore(snapshot, { id: null, text: '' }).text).toBe('It is noon.');
  });

  it('closes a tool call cut off before its result, and adds steers it has not recorded after everything', () => {
    const record = ReplyRecord.empty();
    record.take({ type: 'start', messageId: 'reply-1' }, at);
    record.take(
      { type: 'tool-input-available', toolCallId: 'call-1', toolName: 'save_note', input: { text: 'x' } },
      at,
    );
    record.closeOpenToolCalls('cancelled');
    expect(record.all[0]?.parts).toEqual([
      {
        type: 'tool-invocation',
        toolInvocation: {
          state: 'output-denied',
          toolCallId: 'call-1',
          toolName: 'save_note',
          args: { text: 'x' },
          approval: { id: 'call-1', approved: false, reason: 'cancelled' },
        },
      },
    ]);
    record.appendSteers([{ turnId: 'steer-a', messageId: 'user-a', text: 'late', at }]);
    record.appendSteers([{ turnId: 'steer-a', messageId: 'user-a', text: 'late', at }]);
    expect(record.all.map((message) => message.id)).toEqual(['reply-1', 'user-a']);
  });

  it('records a call that waits for a person as memory keeps it, still open: a Stop closes it as declined (H3)', () => {
    const record = ReplyRecord.empty();
    record.take({ type: 'start', messageId: 'reply-1' }, at);
    record.take(
      { type: 'tool-input-available', toolCallId: 'call-1', toolName: 'save_note', input: { text: 'x' } },
      at,
    );
    record.take({ type: 'tool-approval-request', approvalId: 'approval-1', toolCallId: 'call-1' }, at);
    const waiting = {
      state: 'approval-requested',
      toolCallId: 'call-1',
      toolName: 'save_note',
      args: { text: 'x' },
      approval: { id: 'approval-1' },
    };
    expect(record.all[0]?.parts).toEqual([{ type: 'tool-invocation', toolInvocation: waiting }]);
    expect(record.finishedToolCalls).toEqual([]);
    record.closeOpenToolCalls('cancelled');
    expect(record.all[0]?.parts).toEqual([
      {
        type: 'tool-invocation',
        toolInvocation: {
          ...waiting,
          state: 'output-denied',
          approval: { id: 'call-1', approved: false, reason: 'cancelled' },
        },
      },
    ]);
    expect(record.finishedToolCalls).toEqual(['call-1']);
  });
});
