import type { ThreadEvent } from '@chat/contracts';
import type { Database } from '@chat/db';
import type { Logger } from '../platform/logger';
import type { Signal, Signals } from '../platform/notifications';
import { toTurn } from './turns/dto';
import { findTurn } from './turns/repository';
import type { TurnService } from './turns/turnService';

export interface ThreadEventsDeps {
  db: Database;
  signals: Signals;
  turns: TurnService;
  logger: Logger;
}

const HEARTBEAT_MS = 15_000;
const encoder = new TextEncoder();

/**
 * `GET /api/threads/:id/events`: thread signals from every instance, turned into ThreadEvents with
 * the current queue read from the database (signals carry ids only). It starts with a snapshot so
 * a tab that connects late is in sync at once.
 */
export function threadEventStream(deps: ThreadEventsDeps, threadId: string, abort: AbortSignal) {
  let unsubscribe = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    unsubscribe();
    clearInterval(heartbeat);
  };
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      let chain: Promise<void> = Promise.resolve();
      const send = (build: () => Promise<ThreadEvent | null>) => {
        chain = chain
          .then(build)
          .then((event) => {
            if (event && !abort.aborted)
              controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
          })
          .catch((error: unknown) => deps.logger.warn({ err: error, threadId }, 'thread event failed'));
      };
      send(async () => ({
        type: 'queue.changed',
        threadId,
        turnQueue: await deps.turns.turnQueue(deps.db, threadId),
      }));
      unsubscribe = deps.signals.subscribe((signal) => {
        if (signal.threadId === threadId) send(() => toThreadEvent(deps, signal));
      });
      heartbeat = setInterval(() => controller.enqueue(encoder.encode(': keep-alive\n\n')), HEARTBEAT_MS);
      abort.addEventListener('abort', () => {
        stop();
        try {
          controller.close();
        } catch {
          // Already closed by the client going away.
        }
      });
    },
    cancel: stop,
  });
}

async function toThreadEvent(deps: ThreadEventsDeps, signal: Signal): Promise<ThreadEvent | null> {
  const { threadId } = signal;
  switch (signal.kind) {
    case 'interrupt':
      return null;
    case 'turn.started':
    case 'turn.settled': {
      const turn = await findTurn(deps.db, threadId, signal.turnId);
      if (!turn) return null;
      return {
        type: signal.kind,
        threadId,
        turn: toTurn(turn),
        turnQueue: await deps.turns.turnQueue(deps.db, threadId),
      };
    }
    case 'queue.changed':
      return { type: 'queue.changed', threadId, turnQueue: await deps.turns.turnQueue(deps.db, threadId) };
    case 'thread.changed':
    case 'thread.deleted':
      return { type: signal.kind, threadId };
  }
}
