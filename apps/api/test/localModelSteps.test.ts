import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { planReply, turnOf } from '../src/agent/localModelReply';
import { planToolStep } from '../src/agent/localModelTools';
import { readSteerReminder, steerReminder } from '../src/agent/steerReminder';

const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
const call = (id: string) => ({
  role: 'assistant' as const,
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'current_time', input: {} }],
});
const result = (id: string) => ({
  role: 'tool' as const,
  content: [
    {
      type: 'tool-result' as const,
      toolCallId: id,
      toolName: 'current_time',
      output: { type: 'json' as const, value: { now: 'then' } },
    },
  ],
});
const tools = ['current_time', 'save_note'];

describe('the local model: [[steps:N]] and steers', () => {
  it('calls current_time once per step until N results are in, then answers', () => {
    const ask = user('count [[steps:2]]');
    const step = (prompt: LanguageModelV4Prompt) => planToolStep(prompt, turnOf(prompt), tools).kind;
    expect(step([ask])).toBe('call');
    expect(step([ask, call('a'), result('a')])).toBe('call');
    expect(step([ask, call('a'), result('a'), call('b'), result('b')])).toBe('none');
  });

  it('with [[tool:NAME]], walks that tool instead, giving a tool with a text input the message (T3)', () => {
    const ask = user('look it up [[steps:2]] [[tool:mcp__files__echo]]');
    const echoResult = (id: string) => ({
      role: 'tool' as const,
      content: [
        {
          type: 'tool-result' as const,
          toolCallId: id,
          toolName: 'mcp__files__echo',
          output: { type: 'json' as const, value: { text: 'echo' } },
        },
      ],
    });
    const offered = [...tools, 'mcp__files__echo'];
    const first = planToolStep([ask], turnOf([ask]), offered, ['mcp__files__echo']);
    expect(first).toEqual({ kind: 'call', toolName: 'mcp__files__echo', input: { text: 'look it up' } });
    const later = [ask, call('a'), echoResult('a'), call('b'), echoResult('b')];
    expect(planToolStep(later, turnOf(later), offered, ['mcp__files__echo']).kind).toBe('none');
    // A tool without a text input gets none; a tool no longer offered is said to be missing.
    expect(planToolStep([ask], turnOf([ask]), offered)).toMatchObject({ input: {} });
    expect(planToolStep([ask], turnOf([ask]), tools)).toEqual({
      kind: 'say',
      sentence: 'I have no tool named mcp__files__echo.',
    });
  });

  it('keeps the turn going after a delivered steer and opens the continuation with (steered)', () => {
    const prompt: LanguageModelV4Prompt = [
      { role: 'system', content: steerReminder(['and make it short']) },
      user('count [[steps:2]] [[words:30]]'),
      call('a'),
      result('a'),
      user('and make it short'),
    ];
    const turn = turnOf(prompt);
    expect(turn.index).toBe(1);
    expect(planToolStep(prompt, turn, tools).kind).toBe('call');
    const words = planReply(prompt).words.join(' ');
    expect(words.startsWith('(steered) You added: "and make it short". You said: "count".')).toBe(true);
  });

  it('answers a requeued steer (its own turn, even right after a tool result) with (steered) and no second quote', () => {
    const prompt: LanguageModelV4Prompt = [
      { role: 'system', content: steerReminder(['shorter'], { late: true }) },
      user('first [[steps:1]]'),
      call('a'),
      result('a'),
      user('shorter'),
    ];
    expect(planReply(prompt).words.join(' ')).toMatch(/^\(steered\) You said: "shorter"\./);
  });

  it('finds the steers a reminder quotes, and nothing in other system text', () => {
    expect(readSteerReminder(steerReminder(['a', 'b c']))).toEqual({ steers: ['a', 'b c'], late: false });
    expect(readSteerReminder(steerReminder(['a'], { late: true }))?.late).toBe(true);
    expect(readSteerReminder('You are a helpful assistant.')).toBeUndefined();
  });
});
