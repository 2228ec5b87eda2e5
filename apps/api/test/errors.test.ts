import { errorCodes, errorTable } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { errorResponse, notEligible, threadBusy } from '../src/platform/errors';
import { createLogger } from '../src/platform/logger';

describe('refusals and faults speak the contract', () => {
  it('answers an unexpected fault with 500 internal, a code the contract lists', async () => {
    const response = errorResponse(new Error('boom'), createLogger('silent'));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(errorCodes as readonly string[]).toContain(body.error.code);
    expect(body.error).toEqual({ code: 'internal', message: errorTable.internal.message });
  });

  it('names the reason of not_eligible and thread_busy, with the words the contract gives it', async () => {
    const busy = await errorResponse(threadBusy('queue_waiting'), createLogger('silent')).json();
    expect(busy).toEqual({
      error: {
        code: 'thread_busy',
        reason: 'queue_waiting',
        message: 'Send or delete the queued messages before editing a message.',
      },
    });
    const blocked = await errorResponse(notEligible('head_failed'), createLogger('silent')).json();
    expect(blocked).toMatchObject({ error: { code: 'not_eligible', reason: 'head_failed' } });
  });
});
