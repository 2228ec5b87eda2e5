import type { ChatMessage } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { isShareTokenShape, newShareToken, toSharedMessages } from '../src/chats/shares/snapshot';

describe('the snapshot allow-list', () => {
  it('keeps text, finished tool results and images (by a share-scoped URL) only, whatever else the internal shape carries', () => {
    const imageId = '0b6f4a52-5d0e-4c7a-9d55-2f1f6d0e8a11';
    const messages: ChatMessage[] = [
      {
        id: 'system-1',
        role: 'system',
        parts: [{ type: 'text', text: 'Interrupt handoff: hidden' }],
        metadata: {},
      },
      {
        id: 'u1',
        role: 'user',
        parts: [
          { type: 'text', text: 'hi', providerMetadata: { secret: 'p' } },
          { type: 'file', url: `/api/media/${imageId}`, mediaType: 'image/png', filename: 'cat.png' },
        ],
        metadata: { createdAt: '2026-01-01T00:00:00.000Z', turnId: 'turn-secret' },
      },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'reasoning', text: 'reasoning secret' },
          { type: 'text', text: 'hello', state: 'done' },
          {
            type: 'tool-current_time',
            toolCallId: 'call-secret',
            state: 'output-available',
            input: { input: 'input secret' },
            output: { now: '12:00' },
          },
          {
            type: 'tool-save_note',
            toolCallId: 'call-secret-2',
            state: 'approval-requested',
            input: { text: 'pending args secret' },
            approval: { id: 'approval-secret' },
          },
          {
            type: 'dynamic-tool',
            toolName: 'lookup',
            toolCallId: 'c3',
            state: 'output-available',
            input: {},
            output: 7,
          },
          {
            type: 'dynamic-tool',
            toolName: 'broken',
            toolCallId: 'c4',
            state: 'output-error',
            errorText: 'err secret',
          },
          { type: 'data-hitl', data: { requestId: 'hitl-secret' } },
          { type: 'file', url: 'data:secret', mediaType: 'image/png' },
        ],
        metadata: {
          createdAt: '2026-01-01T00:00:01.000Z',
          interrupted: true,
          error: 'error secret',
          feedback: { rating: 'down', comment: 'feedback secret' },
        },
      },
      { id: 'a2', role: 'assistant', parts: [{ type: 'step-start' }], metadata: {} },
    ];
    const shared = toSharedMessages(messages, 'share-token');
    expect(shared).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'hi' },
          {
            type: 'file',
            mediaType: 'image/png',
            url: `/api/shares/share-token/media/${imageId}`,
            filename: 'cat.png',
          },
        ],
        createdAt: '2026-01-01T00:00:00.000Z',
      },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'hello' },
          { type: 'tool-result', toolName: 'current_time', output: { now: '12:00' } },
          { type: 'tool-result', toolName: 'lookup', output: 7 },
        ],
        createdAt: '2026-01-01T00:00:01.000Z',
      },
    ]);
    expect(JSON.stringify(shared)).not.toMatch(/secret|hidden|\/api\/media\//);
  });
});

describe('share tokens', () => {
  it('are URL-safe, at least 128 bits, and never repeat', () => {
    const tokens = Array.from({ length: 1000 }, () => newShareToken());
    expect(new Set(tokens).size).toBe(1000);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/); // 32 base64url characters: 192 bits
      expect(isShareTokenShape(token)).toBe(true);
    }
    expect(isShareTokenShape('short')).toBe(false);
    expect(isShareTokenShape('has spaces in it, not a token at all')).toBe(false);
  });
});
