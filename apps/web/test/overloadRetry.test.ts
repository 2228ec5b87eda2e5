import { describe, expect, it } from 'vitest';
import { ApiRequestError } from '../app/utils/apiRequest';
import { sendUntilTaken, shedWaitMs } from '../app/utils/overloadRetry';

const overloaded = (retryAfterS: number | null = 1) =>
  new ApiRequestError('The server is busy.', 503, 'overloaded', null, retryAfterS);

/** A server that sheds the first `shedding` attempts, then answers 200; counts the attempts. */
function server(shedding: number) {
  const attempts: number[] = [];
  return {
    attempts,
    send: async () => {
      attempts.push(attempts.length + 1);
      if (attempts.length <= shedding) throw overloaded();
      return new Response('ok', { status: 200 });
    },
  };
}

describe('a send the server sheds (503 overloaded, L1)', () => {
  it('is sent again by itself after the wait the server asked for, and says busy once', async () => {
    const { attempts, send } = server(3);
    const waits: number[] = [];
    let shed = 0;
    const response = await sendUntilTaken(send, {
      onShed: () => shed++,
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(response.status).toBe(200);
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(waits).toEqual([1000, 1000, 1000]);
    expect(shed).toBe(1);
  });

  it('spreads the waits of tabs shed together by up to half the asked wait', () => {
    expect(shedWaitMs(overloaded(2), () => 0)).toBe(2000);
    expect(shedWaitMs(overloaded(2), () => 0.999)).toBe(2999);
    expect(shedWaitMs(overloaded(null), () => 0.5)).toBe(1250);
  });

  it('gives up after the last attempt with the refusal, which can be retried', async () => {
    const { attempts, send } = server(100);
    const error = await sendUntilTaken(send, {
      onShed: () => {},
      maxAttempts: 4,
      sleep: async () => {},
    }).catch((cause: unknown) => cause);
    expect(attempts).toHaveLength(4);
    expect(error).toBeInstanceOf(ApiRequestError);
    expect((error as ApiRequestError).retryable).toBe(true);
  });

  it('stops waiting when Stop aborts it, with the refusal (nothing was sent)', async () => {
    const { attempts, send } = server(100);
    const stop = new AbortController();
    const waiting = sendUntilTaken(send, { onShed: () => stop.abort(), signal: stop.signal });
    await expect(waiting).rejects.toMatchObject({ code: 'overloaded' });
    expect(attempts).toHaveLength(1);
  });

  it('passes any other refusal on at once', async () => {
    let attempts = 0;
    const send = async (): Promise<Response> => {
      attempts++;
      throw new ApiRequestError('The queue is full.', 409, 'queue_full');
    };
    await expect(sendUntilTaken(send, { onShed: () => {} })).rejects.toMatchObject({ code: 'queue_full' });
    expect(attempts).toBe(1);
  });
});
