import { toAISdkMessages } from '@mastra/ai-sdk/ui';
import type { MastraDBMessage } from '@mastra/core/agent';
import { describe, expect, it } from 'vitest';
import { toUIMessages } from '../src/chats/transcript/mastra/uiMessages';

/**
 * The linear conversion gives what `@mastra/ai-sdk/ui`'s `toAISdkMessages` (quadratic) gives, on
 * the parts a browser is sent (transcript.ts drops providerMetadata and part timestamps, and
 * replaces the metadata with the API's own).
 */
const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));

function message(
  id: string,
  role: string,
  second: number,
  content: Record<string, unknown>,
): MastraDBMessage {
  return { id, role, createdAt: at(second), threadId: 't', resourceId: 'r', content } as MastraDBMessage;
}

const shapes: MastraDBMessage[] = [
  message('u1', 'user', 1, { format: 2, parts: [{ type: 'text', text: 'hello' }] }),
  message('a1', 'assistant', 2, {
    format: 2,
    parts: [
      { type: 'step-start' },
      { type: 'text', text: 'hi', providerMetadata: { local: { x: 1 } }, createdAt: 5 },
    ],
    metadata: { interrupted: true },
  }),
  message('u2', 'user', 3, { format: 2, parts: [{ type: 'text', text: '' }] }),
  message('a2', 'assistant', 4, {
    format: 2,
    parts: [
      {
        type: 'tool-invocation',
        toolInvocation: {
          state: 'result',
          toolCallId: 'c1',
          toolName: 'current_time',
          args: {},
          result: { now: 1 },
        },
      },
      { type: 'text', text: 'It is one.' },
    ],
  }),
  message('a3', 'assistant', 5, {
    format: 2,
    parts: [{ type: 'reasoning', reasoning: '', details: [{ type: 'text', text: 'thinking' }] }],
  }),
  message('u3', 'user', 6, {
    format: 2,
    parts: [{ type: 'text', text: '<system-reminder>hidden</system-reminder>' }],
  }),
  message('u4', 'user', 7, {
    format: 2,
    parts: [
      { type: 'text', text: 'two' },
      { type: 'text', text: 'parts' },
    ],
  }),
  message('a4', 'assistant', 8, { format: 2, parts: [{ type: 'text', text: 'plain' }], content: 'plain' }),
];

const visible = (messages: Array<{ id: string; role: string; parts: readonly unknown[] }>) =>
  messages.map(({ id, role, parts }) => ({
    id,
    role,
    parts: (parts as Array<Record<string, unknown>>).map(
      ({ providerMetadata: _p, createdAt: _c, ...part }) => part,
    ),
  }));

describe('converting stored messages for a browser', () => {
  it('matches Mastra for every shape, one by one and as a whole transcript', () => {
    for (const shape of shapes) {
      expect(visible(toUIMessages([shape]))).toEqual(visible(toAISdkMessages([shape], { version: 'v7' })));
    }
    const expected = visible(toAISdkMessages(shapes, { version: 'v7' }));
    expect(expected.map((entry) => entry.id)).toContain('a2');
    expect(visible(toUIMessages(shapes))).toEqual(expected);
  });
});
