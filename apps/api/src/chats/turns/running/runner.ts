import { COMPACTION_PART, type HitlDecision, type ToolMode, turnErrorMessages } from '@chat/contracts';
import type {
  BranchRow,
  ContextMarkerRow,
  Database,
  HitlRequestRow,
  Queryable,
  ThreadRow,
  TurnRow,
} from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { isDatabaseUnavailable } from '../../../platform/databaseErrors';
import { InvariantError } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signal, Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { planTurnMessages, type TurnMessages } from '../../branches/transcript';
import { type RunSetup, readAccountInstructions, readRunSetup, runSetupOf } from '../../threads/choices';
import type { ChatToolModes } from '../../threads/repository';
import type { TranscriptStore } from '../../transcript/transcriptStore';
import { claimNewTurn, claimTurn, type NewTurnValues } from '../claim/claim';
import { type ModelHistory, markAgentCompaction, prepareHistory } from '../context/compaction';
import { findLatestMarker } from '../context/repository';
import type { ContextWindows, TokenCount } from '../context/window';
import type {
  DriverEvent,
  DriverTurn,
  RuntimeConnection,
  RuntimeDriver,
  Segment,
  SteerMessage,
  SuspendedCall,
} from '../driver/types';
import { failureWording } from '../failureWording';
import { leaseFromNow } from '../lease';
import { transitionTurn } from '../lifecycle';
import { ReplyRecord } from '../replyRecord';
import { findTurn } from '../repository';
import {
  closeCutOffReply,
  discardIfStoppedAsItSuspended,
  type Outcome,
  storeReply,
  turnMessagesOf,
} from '../settle/replyRepair';
import { failUnsettledTurn, heldBy, markSettling, settleRun } from '../settle/settle';
import { DEFAULT_SETTLE_GIVE_UP_MS, GrowingPause, SettleRetry } from '../settle/settleRetry';
import { requeuePendingSteers, takeSteersAtBoundary } from '../steer/delivery';
import { endOfReply, TurnStream } from '../stream/turnStream';
import { TurnCheckpoints } from './checkpoint';
import { IdleBoundEvents } from './idleBound';
import { forkPointToken, newestResumeToken } from './repository';
import { assertRunnable, endsStep, outcomeOf, type RunRecord, takeChunk } from './runRecord';
import { TextAppends } from './textAppends';

/**
 * How a run that stopped on a tool call hands its turn over to the approval lifecycle (which
 * records the request and ends the stream with it: approval/suspend.ts). Given by the wiring, so
 * running a turn needs nothing of how approvals are decided. Throws when the request could not be
 * recorded (the runner tries again).
 */
export type SuspendRun = (
  turn: TurnRow,
  reply: ReplyRecord,
  call: SuspendedCall,
  approvalRequest: (UIMessageChunk & { type: 'tool-approval-request' }) | undefined,
  stream: TurnStream,
) => Promise<void>;

export interface TurnRunnerDeps {
  db: Database;
  /** The transcript store: a run's messages are made sure of there before its turn is done. */
  transcript: TranscriptStore;
  /** The runtime driver every model call goes through (the Mastra agent; see driver/types.ts). */
  driver: RuntimeDriver;
  /** Hands a run suspended for a tool approval to the approval lifecycle. */
  suspend: SuspendRun;
  signals: Signals;
  logger: Logger;
  /** This instance's id, written on the turns it claims. */
  runnerId: string;
  leaseMs: number;
  /**
   * The longest a run may go without any event from its driver before it is stopped as failed
   * (`TURN_IDLE_MS`), so a run that hangs cannot hold its thread and renew its lease forever.
   */
  idleMs?: number;
  /**
   * F1: how long a settle failing for a reason other than an outage is tried again before its turn
   * ends failed (`SETTLE_GIVE_UP_MS`, default a minute).
   */
  settleGiveUpMs?: number;
  /** What the replies it runs are written by (`CHAT_MODEL`), recorded on each turn. */
  modelName: string;
  /**
   * The chat's tool settings (T1), read by a run before each step (T2); `read`: the settings as
   * the run's setup read them (its first step goes by those, with no read of its own).
   */
  toolModes?: (threadId: string, read?: ChatToolModes) => Promise<Record<string, ToolMode>>;
  /** Most turns one account may have running at once, across threads and instances; 0: no limit. */
  maxRunningTurnsPerAccount?: number;
  /**
   * The model's window (C2, C3): what of a branch each call gets, compacted first past the
   * threshold. Without it a call gets the newest `UNMEASURED_HISTORY` messages (tests of the seam).
   */
  windows?: ContextWindows;
}

/** The person's instructions as one system text: the account's, then the chat's (M4). */
function customInstructions(texts: { account: string; chat: string }): string {
  return [texts.account.trim(), texts.chat.trim()].filter((text) => text !== '').join('\n\n');
}

/** The history a run gets when the runner measures no window (a runner built without `windows`). */
const UNMEASURED_HISTORY: ModelHistory = { messages: 40, summary: null };

interface RunningTurn {
  threadId: string;
  /** Whether the driver's run takes steers in; unknown until it is connected. */
  steerable?: boolean;
  controller: AbortController;
  stream: TurnStream;
  done: Promise<void>;
}

/**
 * One run of a turn as it goes through the runner, from its driver's first event to its turn
 * settled: what it runs (the turn, where, as what segment), how it is stopped, where its reply
 * goes (the stream, the checkpoints) and what it gathered (the record). Passed along whole, so each
 * step of the run reads what it needs of it.
 */
interface Run {
  turn: TurnRow;
  branch: BranchRow;
  ownerId: string;
  /** What its claim read for its start, when it read it (`claimNew`). */
  reads?: StartReads;
  /** The turn's user message (a claimed turn always has one). */
  userMessageId: string;
  segment: Segment;
  /** Aborted by a stop, an idle run, or the lease going to someone else. */
  controller: AbortController;
  stream: TurnStream;
  record: RunRecord;
  checkpoints: TurnCheckpoints;
  /** Whether the turn is still this runner's (false once its lease went to someone else). */
  held: { value: boolean };
  /**
   * A step's end taken but not passed on yet: stored and shown when the run goes on
   * (`passStepEnd`), or shown once the settle stored the reply when it was the run's last.
   */
  stepEnd?: UIMessageChunk;
}

/**
 * What a started run reads before its first model call, read by a send's claim under the thread
 * lock with its writes (`TurnRunner.claimNew`, ADR-060), so the run does not read it again.
 */
export interface StartReads {
  /** The chat's and its owner's instructions, its workspace and tool settings (M4, T1). */
  setup: RunSetup;
  /** The branch's latest context marker (null: none): where its window starts (C2). */
  marker: ContextMarkerRow | null;
}

/** How long the runner waits on a silent run by default (`TURN_IDLE_MS`). */
export const DEFAULT_IDLE_MS = 300_000;

/** What came of making a finished run durable (`untilDurable`). */
type Durable<T> =
  | { kind: 'done'; value: T }
  /** The turn is no longer this runner's, or the instance shuts down: crash recovery ends it. */
  | { kind: 'left' }
  /** F1: it kept failing for a reason other than an outage; the turn ended failed (or was gone). */
  | { kind: 'failed'; turn: TurnRow | null };

/**
 * How long a run that is starting waits for a database that went away (reading what the model
 * gets) before it fails: an outage that ends by then only delays the reply.
 */
const START_WAIT_MS = 30_000;

/**
 * Claims turns for this instance and runs them, independent of any HTTP connection. It streams
 * the model's reply into a TurnStream while it records the reply (TurnCheckpoints write it behind
 * the stream and at every step end, and renew the lease), then makes the reply durable in memory
 * and settles the turn (which releases the thread's active slot). A turn is done only once its
 * messages are in memory: while the database is away the runner keeps the turn (and its lease),
 * holds the reply, and tries again; its stream ends only then.
 */
export class TurnRunner {
  private readonly running = new Map<string, RunningTurn>();
  private readonly stopListening: () => void;
  /** Aborted by `stop`: retries stop waiting and leave their turns to crash recovery. */
  private readonly shutdown = new AbortController();

  /** The text appends of every reply this runner streams, written together. */
  private readonly appends: TextAppends;

  constructor(private readonly deps: TurnRunnerDeps) {
    this.appends = new TextAppends(deps.db, deps.runnerId, deps.leaseMs);
    // Interrupts may arrive from any instance (S1); only the one running the turn acts.
    this.stopListening = deps.signals.subscribe((signal) => {
      if (signal.kind === 'interrupt') this.abort(signal.turnId);
      else if (signal.kind === 'steer') void this.queueSteersItCannotTake(signal.threadId);
    });
  }

  /**
   * Q5: takes the thread's active slot for this instance, to run `turn` on `branchId` (the version
   * shown now: queued turns belong to the thread, not to a branch). Runs inside the caller's
   * transaction, which holds the thread lock; `start` the turn once it has committed.
   *
   * S5: the run gets the hidden handoff instruction when the branch's last settled turn was
   * interrupted, whichever way this claim came (a send, Send now, Stop & send, a viewer's claim, a
   * retry). Decided here, under the lock, from the branch's state, so racing tabs can neither drop
   * nor duplicate it: the turn after a handoff turn sees a settled, uninterrupted one.
   */
  async claim(tx: Queryable, turn: TurnRow, branchId: string): Promise<TurnRow> {
    return await claimTurn(tx, turn, branchId, this.deps);
  }

  /**
   * `claim` of a turn accepted in the same transaction: recorded running at once (claim.ts). With
   * the insert go, in the same round trip and under the thread lock, what the run reads as it
   * starts (`StartReads`: the owner's instructions beside the locked `thread` row, the branch's
   * latest marker) and `turn.started`, delivered at the commit (ADR-060); `start` it with them.
   */
  async claimNew(
    tx: Queryable,
    values: NewTurnValues,
    known: { ownerId: string; lastSettled?: TurnRow | null; thread: ThreadRow },
  ): Promise<{ turn: TurnRow; reads: StartReads }> {
    const id = crypto.randomUUID();
    const { ownerId, lastSettled, thread } = known;
    const [turn, account, marker] = await Promise.all([
      claimNewTurn(tx, { ...values, id }, { ownerId, lastSettled, chatModel: thread.model }, this.deps),
      readAccountInstructions(tx, ownerId),
      findLatestMarker(tx, values.branchId),
      this.deps.signals.publishWith(tx, { kind: 'turn.started', threadId: values.threadId, turnId: id }),
    ]);
    return { turn, reads: { setup: runSetupOf(thread, account), marker: marker ?? null } };
  }

  /**
   * A turn waiting for an approval runs again on this instance, keeping what it has so far (H3).
   * Inside the deciding transaction, like `claim`; then `resume` it once that has committed.
   */
  async claimResumed(tx: Queryable, turn: TurnRow): Promise<TurnRow> {
    return await transitionTurn(tx, turn, 'running', {
      runnerId: this.deps.runnerId,
      leaseExpiresAt: leaseFromNow(this.deps.leaseMs),
    });
  }

  /**
   * Runs a turn this instance claimed, and tells every instance it started. `branch`: the turn's
   * branch when the caller read it already (else it is read here); `reads`: what `claimNew` read
   * for it (its `turn.started` went out with that claim's commit).
   */
  async start(turn: TurnRow, ownerId: string, branch?: BranchRow, reads?: StartReads): Promise<TurnStream> {
    return await this.launch(turn, ownerId, { kind: 'start' }, branch, reads);
  }

  /**
   * Continues a turn after the person decided on its tool call (the run the driver suspended).
   * `branch`: read by the deciding transaction, so nothing after its commit can fail the answer.
   */
  async resume(
    turn: TurnRow,
    ownerId: string,
    request: HitlRequestRow,
    decision: HitlDecision,
    branch?: BranchRow,
  ): Promise<TurnStream> {
    const call = {
      resumeToken: request.runId,
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      args: request.args,
    };
    return await this.launch(turn, ownerId, { kind: 'resume', call, decision }, branch);
  }

  private async launch(
    turn: TurnRow,
    ownerId: string,
    segment: Segment,
    known?: BranchRow,
    reads?: StartReads,
  ): Promise<TurnStream> {
    assertRunnable(turn, this.deps.runnerId);
    const branch = known?.id === turn.branchId ? known : await findBranch(this.deps.db, turn.branchId);
    if (!branch) throw new InvariantError(`turn ${turn.id} has no branch`);
    const controller = new AbortController();
    const stream = new TurnStream();
    const done = this.run(turn, { branch, ownerId, ...(reads ? { reads } : {}) }, segment, controller, stream)
      .catch((error: unknown) => this.deps.logger.error({ err: error, turnId: turn.id }, 'turn run crashed'))
      .finally(() => {
        this.running.delete(turn.id);
        // Whatever happened, subscribers are never left waiting on a stream nobody writes.
        stream.close();
      });
    this.running.set(turn.id, { threadId: turn.threadId, controller, stream, done });
    // Announced with its claim's commit already.
    if (reads) return stream;
    // The run has started whatever happens to the announcement: other tabs also find it by reading.
    await this.announce({ kind: 'turn.started', threadId: turn.threadId, turnId: turn.id });
    return stream;
  }

  /** The live reply of a turn running on this instance. */
  replyStream(turnId: string): TurnStream | undefined {
    return this.running.get(turnId)?.stream;
  }

  /** Whether this instance runs the turn (producing its reply, or making it durable). */
  holds(turnId: string): boolean {
    return this.running.has(turnId);
  }

  /**
   * Resolves once a turn running on this instance has finished (settled, or left to recovery);
   * undefined when it does not run here.
   */
  finished(turnId: string): Promise<void> | undefined {
    return this.running.get(turnId)?.done;
  }

  abort(turnId: string): boolean {
    const running = this.running.get(turnId);
    if (!running) return false;
    running.controller.abort(new Error('interrupted'));
    return true;
  }

  /**
   * Interrupts every turn of this instance and waits until each is settled (shutdown). A turn
   * whose reply cannot be made durable now (the database is away) is left to crash recovery.
   */
  async stop(): Promise<void> {
    this.stopListening();
    for (const turnId of this.running.keys()) this.abort(turnId);
    // Settling gets its tries while the shutdown's bound allows; then recovery takes over.
    setTimeout(() => this.shutdown.abort(), 3_000).unref();
    await Promise.all([...this.running.values()].map((running) => running.done));
  }

  private async run(
    turn: TurnRow,
    context: { branch: BranchRow; ownerId: string; reads?: StartReads },
    segment: Segment,
    controller: AbortController,
    stream: TurnStream,
  ): Promise<void> {
    const userMessageId = turn.userMessageId;
    // The claim gave it a user message id; a turn without one never reached a claim (no fallback).
    if (!userMessageId)
      throw new InvariantError(`turn ${turn.id} reached the runner without a user message id`);
    // A continued turn keeps the reply it had before it waited (its checkpoint at the suspension).
    const reply =
      segment.kind === 'resume'
        ? ReplyRecord.restore(turn.partialParts, { id: turn.assistantMessageId, text: turn.partialText })
        : ReplyRecord.empty();
    if (segment.kind === 'resume') reply.decide(segment.call.toolCallId, segment.decision === 'approve');
    const held = { value: true };
    const checkpoints = new TurnCheckpoints(
      { ...this.deps, appends: this.appends },
      turn.id,
      reply,
      () => {
        // Settled elsewhere (its lease lapsed and recovery took it) or stopped: not ours any more.
        held.value = false;
        controller.abort(new Error('lease lost'));
      },
      { id: turn.assistantMessageId, text: turn.partialText },
    );
    const run: Run = {
      turn,
      ...context,
      userMessageId,
      segment,
      controller,
      stream,
      record: { reply, resumeToken: turn.resumeToken },
      checkpoints,
      held,
    };
    try {
      await this.follow(run);
      checkpoints.finishStreaming();
      await this.finish(run);
    } finally {
      await checkpoints.release();
    }
  }

  /** Reads the driver's run to its end into the record and the stream. */
  private async follow(run: Run): Promise<void> {
    const { turn, segment, controller, stream, record } = run;
    try {
      const history = await this.historyFor(run);
      if (!history) return;
      // M4: read as the run starts, so a change reaches the next turn, never one already running.
      // After the history, not beside it: this read also waits out an outage that began while the
      // history was read. One that begins after it meets the run's own first reads (`connect`).
      // A resumed run reads it too: an agent chat's run goes on on the agent. A send that runs at
      // once read it with its claim, under the thread lock (`claimNew`, ADR-060).
      const setup =
        run.reads?.setup ??
        (await this.waitingForDatabase(controller, () => readRunSetup(this.deps.db, turn.threadId)));
      const custom = segment.kind === 'start' ? customInstructions(setup) : '';
      const { workspace } = setup;
      const { toolModes } = this.deps;
      let firstModes: ChatToolModes | undefined = setup.toolModes;
      // A3: an agent that keeps its own session resumes it from the newest token kept on the branch.
      const resumesSession = segment.kind === 'start' && (workspace || this.deps.driver.resumesSessions);
      const resumeFrom = resumesSession
        ? await this.waitingForDatabase(controller, () => newestResumeToken(this.deps.db, run.branch.id))
        : null;
      // A7: a version that kept no token yet forks the session of the version it came from.
      const forkFrom =
        resumesSession && !resumeFrom
          ? await this.waitingForDatabase(controller, () => forkPointToken(this.deps.db, run.branch.id))
          : null;
      // The steers this run was handed at its boundaries (by their turn ids).
      const heard = new Set<string>();
      const started = await this.connect(controller, {
        turnId: turn.id,
        conversation: { id: run.branch.memoryThreadId, ownerId: run.ownerId },
        message: { id: run.userMessageId, text: turn.text, attachments: turn.attachments },
        instructions: { handoff: turn.handoff, lateSteer: turn.steer, ...(custom ? { custom } : {}) },
        ...(turn.model ? { model: turn.model } : {}),
        segment,
        ...(resumeFrom ? { resumeFrom } : {}),
        ...(forkFrom ? { forkFrom } : {}),
        ...(workspace ? { workspace } : {}),
        history,
        abortSignal: controller.signal,
        // A boundary the database cannot serve takes nothing in: the reply goes on, its steers wait
        // for the next boundary or the queue. One whose commit went through unheard is handed over
        // at the next boundary, or kept after the reply by the settle (which reads them under the
        // thread lock) when none comes.
        takeSteers: () =>
          takeSteersAtBoundary(this.deps, turn, heard).then(
            (steers) => {
              for (const steer of steers) heard.add(steer.turnId);
              return steers;
            },
            (error: unknown) => {
              this.deps.logger.warn(
                { err: error, turnId: turn.id },
                'could not take steers in at a boundary',
              );
              return [];
            },
          ),
        ...(toolModes
          ? {
              toolModes: () => {
                // The first step's settings came with the setup's read (one statement fewer).
                const read = firstModes;
                firstModes = undefined;
                return toolModes(turn.threadId, read);
              },
            }
          : {}),
      }).catch((error: unknown) => {
        // The database stayed away past the wait: failed as a turn whose context could not be read.
        if (!isDatabaseUnavailable(error) || controller.signal.aborted) throw error;
        record.streamError = turnErrorMessages.contextUnavailable;
        stream.push({ type: 'error', errorText: record.streamError });
        return undefined;
      });
      if (!started) return;
      const { connection, events, first } = started;
      const running = this.running.get(turn.id);
      if (running) running.steerable = connection.steerable;
      // A run that cannot steer leaves steers (sent before it connected, or later) to the queue.
      if (!connection.steerable) void this.queueSteersItCannotTake(turn.threadId);
      // The browser continues the reply it already shows (the message holding the tool call).
      if (segment.kind === 'resume') {
        stream.push({
          type: 'start',
          ...(turn.assistantMessageId ? { messageId: turn.assistantMessageId } : {}),
        });
      }
      let next = first;
      try {
        for (; ; next = await events.next()) {
          if (next === 'idle') {
            // The run went silent: stopped as failed, so it cannot hold the thread forever.
            record.idle = true;
            this.deps.logger.warn({ turnId: turn.id }, 'turn run went silent; stopping it');
            stream.push({ type: 'error', errorText: turnErrorMessages.modelIdle });
            controller.abort(new Error('idle'));
            connection.close();
            return;
          }
          if (next.done) return;
          const taking = this.take(run, next.value);
          if (taking) await taking;
        }
      } finally {
        events.stop();
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      record.streamError = this.failure(turn, error, 'server');
      stream.push({ type: 'error', errorText: record.streamError });
    }
  }

  /**
   * F3: a failure of the run as its person reads it (`failureWording`); what the error said goes
   * to the log, once, with the turn's id.
   */
  private failure(turn: TurnRow, error: unknown, failing: 'model' | 'server'): string {
    this.deps.logger.warn({ err: error, turnId: turn.id, threadId: turn.threadId }, 'turn run failed');
    return failureWording(error, failing);
  }

  /**
   * Starts the driver's run and reads its first event. A run whose own first reads could not reach
   * the database (`unavailable`: nothing produced or stored) is started again, as a starting run's
   * reads are (`waitingForDatabase`).
   */
  private async connect(controller: AbortController, input: DriverTurn): Promise<StartedRun> {
    return await this.waitingForDatabase(controller, async () => {
      const connection = await this.deps.driver.send(input);
      const events = new IdleBoundEvents(
        connection.events[Symbol.asyncIterator](),
        this.deps.idleMs ?? DEFAULT_IDLE_MS,
      );
      const first = await events.next().catch((error: unknown) => {
        events.stop();
        throw error;
      });
      if (first !== 'idle' && !first.done && first.value.type === 'unavailable') {
        events.stop();
        connection.close();
        throw first.value.cause;
      }
      return { connection, events, first };
    });
  }

  /**
   * What of the branch a started run's model call gets (C3): measured from stored counts, and
   * compacted first past the threshold, its progress streamed to the reply's viewers (not stored:
   * the marker is). Undefined when the window could not be prepared (the run is failed, or was
   * stopped meanwhile). A resumed run gets the window as it stands, never a compaction.
   */
  private async historyFor(run: Run): Promise<ModelHistory | undefined> {
    const { turn, branch, segment, controller, stream, record } = run;
    const { db, driver, logger } = this.deps;
    // C2 with M2: measured against the window of the model this turn was claimed with.
    const windows = this.deps.windows?.forModel(turn.model);
    if (!windows) return UNMEASURED_HISTORY;
    if (segment.kind === 'resume') {
      // A resumed run continues its snapshot; its recall keeps to the same window (no compaction
      // in the middle of a reply).
      return await windows.measure(db, branch).then(
        (measured) => ({ messages: measured.messages, summary: null }),
        () => UNMEASURED_HISTORY,
      );
    }
    try {
      const prepared = await this.waitingForDatabase(controller, () =>
        prepareHistory(
          { db, driver, windows, logger },
          branch,
          windows.incomingTokens(turn.text, turn.attachments),
          controller.signal,
          (progress) => stream.push({ type: COMPACTION_PART, data: progress, transient: true }),
          run.reads?.marker,
        ),
      );
      if (prepared.compacted) await this.announce({ kind: 'context.changed', threadId: turn.threadId });
      return prepared;
    } catch (error) {
      if (controller.signal.aborted) return undefined;
      logger.warn({ err: error, turnId: turn.id }, "could not prepare the model's context");
      record.streamError = turnErrorMessages.contextUnavailable;
      stream.push({ type: 'error', errorText: record.streamError });
      return undefined;
    }
  }

  /**
   * A read a starting run needs (or its start, `connect`), tried again while the database cannot be reached (a connection
   * the outage broke, the server restarting) for up to START_WAIT_MS, pausing longer each time:
   * a turn accepted just before an outage, or claimed just after one, is answered instead of
   * failed. Any other error, a stop, or the wait running out ends it as before.
   */
  private async waitingForDatabase<T>(controller: AbortController, read: () => Promise<T>): Promise<T> {
    const until = Date.now() + START_WAIT_MS;
    const pauses = new GrowingPause();
    for (;;) {
      try {
        return await read();
      } catch (error) {
        const waiting = !controller.signal.aborted && !this.shutdown.signal.aborted;
        if (!isDatabaseUnavailable(error) || !waiting || Date.now() + pauses.peek() > until) throw error;
      }
      await sleep(pauses.next(), controller.signal);
    }
  }

  /**
   * One event of the run: recorded, checkpointed as it requires, and passed on. A promise only
   * when it has something to wait for (a step's end is stored first): a reply's words, most of
   * its events, pass without a promise and its job each.
   */
  private take(run: Run, event: DriverEvent): Promise<void> | undefined {
    // A step's end held back is stored and passed on before anything that shows more of the run.
    if (run.stepEnd && !recordsOnly(event)) return this.passStepEnd(run).then(() => this.take(run, event));
    const { turn, segment, controller, stream, record, checkpoints } = run;
    if (event.type === 'chunk') {
      const { chunk } = event;
      const passOn = takeChunk(chunk, record);
      // The last step's end is stored by the settle before anyone sees it, with no write of its own
      // (most replies are one step); only what follows it says it was not the last (`passStepEnd`).
      if (chunk.type === 'finish-step' && passOn) {
        run.stepEnd = chunk;
        return undefined;
      }
      // What a person sees of a finished step is stored before they see it.
      if (endsStep(chunk))
        return checkpoints.stepEnded().then(() => {
          if (passOn) stream.push(chunk);
        });
      if (chunk.type === 'text-delta') checkpoints.textGrew();
      if (passOn) stream.push(chunk);
    } else if (event.type === 'steer-boundary') return this.takeSteers(run, event);
    else if (event.type === 'suspended') record.suspended = event.call;
    else if (event.type === 'resume-token') record.resumeToken = event.token;
    else if (event.type === 'usage') record.usage = event.usage;
    else if (event.type === 'compacted') record.compacted = true;
    else if (event.type === 'error' || event.type === 'unavailable') {
      if (controller.signal.aborted) return undefined;
      // `unavailable` after the first event breaks the driver's word: it ends the run as a failure.
      record.streamError =
        event.type === 'error'
          ? this.failure(turn, event.error, 'model')
          : turnErrorMessages.contextUnavailable;
      stream.push({ type: 'error', errorText: record.streamError });
    } else if (!event.saved) {
      // The driver's save failed (the database went away as the run ended): `finish` writes it.
      this.deps.logger.warn(
        { turnId: turn.id, segment: segment.kind },
        "the run's own save of its messages failed; the runner writes them",
      );
    }
    return undefined;
  }

  /** A step's end held back (`Run.stepEnd`) was not the run's last: stored, then passed on. */
  private async passStepEnd(run: Run): Promise<void> {
    const chunk = run.stepEnd;
    run.stepEnd = undefined;
    await run.checkpoints.stepEnded();
    if (chunk) run.stream.push(chunk);
  }

  /** The last step's end, held back until the reply it ends is stored (the settle, a suspension). */
  private showStepEnd(run: Run): void {
    const chunk = run.stepEnd;
    run.stepEnd = undefined;
    if (chunk) run.stream.push(chunk);
  }

  /** Steers taken in at a step boundary (`take`). */
  private async takeSteers(run: Run, event: Extract<DriverEvent, { type: 'steer-boundary' }>): Promise<void> {
    const { turn, stream, record, checkpoints } = run;
    const { steers, continuationMessageId } = event;
    // The reply so far, the steers and the continuation's start are stored before the roll shows.
    record.reply.takeSteers(steers, continuationMessageId);
    await checkpoints.stepEnded();
    stream.push({ type: 'data-steer-boundary', data: { steers, continuationMessageId } });
    // The steers left the Dock when the driver took them; tabs hear it once the roll is out.
    await this.announce({ kind: 'queue.changed', threadId: turn.threadId });
  }

  /**
   * Makes the ended run durable, then ends its stream: the reply's messages in memory and the turn
   * settled, in one transaction (`settleRun`), or, suspended for an approval, the reply stored and
   * the request recorded. While that fails the turn
   * stays this runner's (its lease renewed) and the runner tries again; after the first failure
   * the row takes the reply (`settling`), so a crash meanwhile ends it as the run did.
   */
  private async finish(run: Run): Promise<void> {
    const { turn, record, controller, stream } = run;
    const { logger } = this.deps;
    const { reply, suspended } = record;
    const outcome = outcomeOf(record, controller.signal.aborted);
    if (outcome.status === 'failed') {
      logger.warn({ turnId: turn.id, threadId: turn.threadId, error: outcome.error }, 'turn failed');
    }
    if (outcome.status === 'awaiting_approval' && suspended) {
      const durable = await this.untilDurable(run, async () => {
        // Stored with the steers as the database has them: nothing checks them again before the wait.
        await storeReply(this.deps, turn, run, reply, outcome, suspended);
        this.showStepEnd(run);
        await this.deps.suspend(turn, reply, suspended, record.approvalRequest, stream);
        return true;
      });
      // The approval request ended the stream; a turn that could not wait for it ends here.
      if (durable.kind === 'failed') await this.endUnsettled(run, durable.turn);
      return;
    }
    const status = outcome.status === 'awaiting_approval' ? 'completed' : outcome.status;
    const error = outcome.status === 'failed' ? outcome.error : null;
    const durable = await this.untilDurable(
      run,
      async () => {
        closeCutOffReply(reply, outcome);
        const place = { branch: run.branch, ownerId: run.ownerId, userMessageId: run.userMessageId };
        const messages = (steers: Array<SteerMessage & { at: Date | null }>) => {
          reply.appendSteers(steers);
          return turnMessagesOf(turn, place, reply);
        };
        const settled = await settleRun(
          this.deps,
          turn,
          {
            status,
            error,
            resumeToken: record.resumeToken,
            ...(record.usage ? { usage: record.usage } : {}),
            messages,
            ...this.tokenCountsOf(turn, messages),
          },
          { memoryThreadId: run.branch.memoryThreadId, userMessageId: run.userMessageId },
        );
        await discardIfStoppedAsItSuspended(this.deps, outcome, suspended);
        return settled?.turn ?? null;
      },
      () =>
        markSettling(this.deps.db, turn, this.deps.runnerId, {
          reply,
          status,
          error,
          resumeToken: record.resumeToken,
        }),
    );
    if (durable.kind === 'done' && record.compacted) await this.markAgentCompaction(run);
    if (durable.kind === 'failed') await this.endUnsettled(run, durable.turn);
    else await this.endStream(run, durable.kind === 'done' ? durable.value : undefined);
  }

  /**
   * C2: the token counts of the messages a settle writes, sent with its lock (see `settleRun`):
   * counted from the record as the settle would write it when nothing of it is stored yet, which
   * is what a driver without its own save finds. A driver that saves its own run's messages leaves
   * the settle little or nothing to write, and its stored messages are counted by the next measure.
   */
  private tokenCountsOf(
    turn: TurnRow,
    messages: (steers: Array<SteerMessage & { at: Date | null }>) => TurnMessages,
  ): { tokenCounts?: TokenCount[] } {
    const windows = this.deps.windows?.forModel(turn.model);
    if (!windows || this.deps.driver.savesMessages) return {};
    const { writes } = planTurnMessages(messages([]), []);
    return { tokenCounts: windows.countsOf(turn.threadId, writes) };
  }

  /**
   * A6: the agent compacted its own conversation in this run: the branch is marked at the run's
   * message, before the stream ends (a page that refetches on finish shows it). Best effort: the
   * turn is settled already, and a marker lost to an outage here costs only the notice's row.
   */
  private async markAgentCompaction(run: Run): Promise<void> {
    await markAgentCompaction(this.deps.db, run.branch, run.userMessageId).catch((error: unknown) =>
      this.deps.logger.warn({ turnId: run.turn.id, err: error }, "could not mark the agent's compaction"),
    );
  }

  /** F1: the stream of a turn that ended failed unsettled says so (the product's words), then ends. */
  private async endUnsettled(run: Run, failed: TurnRow | null): Promise<void> {
    if (failed) {
      // Its row keeps the reply (`failUnsettledTurn`).
      this.showStepEnd(run);
      run.stream.push({ type: 'error', errorText: turnErrorMessages.notSaved });
    }
    await this.endStream(run, failed);
  }

  /**
   * Runs `attempt` until it succeeds, pausing longer after each failure. After the first failure
   * `snapshot` puts what the run ended with on the turn row. An outage is waited out; a failure of
   * any other kind is tried again for `settleGiveUpMs`, then the turn ends failed with the run's
   * reply kept on its row (F1, `SettleRetry`). Leaves the turn to crash recovery when it is no longer this
   * runner's or the instance shuts down.
   */
  private async untilDurable<T>(
    run: Run,
    attempt: () => Promise<T>,
    snapshot?: () => Promise<boolean>,
  ): Promise<Durable<T>> {
    const { turn, held } = run;
    const { reply } = run.record;
    const { logger, runnerId } = this.deps;
    const retry = new SettleRetry(this.deps.settleGiveUpMs ?? DEFAULT_SETTLE_GIVE_UP_MS, {
      logger,
      turn,
      notYet: 'could not settle a turn yet; retrying',
    });
    let snapshotted = snapshot === undefined;
    for (;;) {
      let giveUp = false;
      try {
        const value = await attempt();
        if (retry.tries > 0)
          logger.info({ turnId: turn.id, tries: retry.tries + 1 }, 'turn settled after retries');
        return { kind: 'done', value };
      } catch (error) {
        giveUp = retry.failed(error);
        if (!snapshotted && snapshot) snapshotted = await snapshot().catch(() => false);
      }
      if (giveUp && held.value) {
        const failed = await failUnsettledTurn(
          this.deps,
          turn.threadId,
          (tx) => heldBy(tx, turn, runnerId),
          reply,
        ).catch((error: unknown) => {
          // Even that could not be written: crash recovery ends it (with the same bound).
          logger.error({ err: error, turnId: turn.id }, 'could not end an unsettled turn as failed');
          return undefined;
        });
        if (failed !== undefined) return { kind: 'failed', turn: failed };
        return { kind: 'left' };
      }
      if (!held.value || this.shutdown.signal.aborted) {
        logger.warn({ turnId: turn.id }, 'left a turn to crash recovery');
        return { kind: 'left' };
      }
      await sleep(retry.nextPauseMs(), this.shutdown.signal);
    }
  }

  /**
   * The stream ends once the turn is settled, as it ended. A turn someone else settled (its lease
   * lapsed) ends as they settled it; one left to recovery ends without a finish (the page reads the
   * turn's end when it comes).
   */
  private async endStream(run: Run, settled: TurnRow | null | undefined) {
    const { turn, stream } = run;
    const final =
      settled ??
      (settled === null
        ? await findTurn(this.deps.db, turn.threadId, turn.id).catch(() => undefined)
        : undefined);
    if (final && final.status !== 'running' && final.status !== 'settling') {
      this.showStepEnd(run);
      for (const chunk of endOfReply(final.status)) stream.push(chunk);
    }
    stream.close();
  }

  /** A signal other instances act on, sent best-effort: they also find the change by reading. */
  private async announce(signal: Signal): Promise<void> {
    await this.deps.signals
      .publish(signal)
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, signal: signal.kind }, 'could not announce'),
      );
  }

  /**
   * Steers sent to a thread whose run on this instance cannot take them in go to the head of the
   * queue at once (they run next, with the steer reminder). A run that can steer asks for them at
   * its step boundaries instead.
   */
  private async queueSteersItCannotTake(threadId: string): Promise<void> {
    const [turnId, running] =
      [...this.running.entries()].find(([, entry]) => entry.threadId === threadId) ?? [];
    // Not running here, not connected yet (it decides once it is), or it takes steers itself.
    if (running?.steerable !== false) return;
    await requeuePendingSteers(this.deps, threadId).catch((error: unknown) =>
      this.deps.logger.warn({ err: error, turnId }, 'could not queue steers'),
    );
  }
}

/** A driver's run that started: its connection, its events and the first of them, already read. */
interface StartedRun {
  connection: RuntimeConnection;
  /** Read to its end by the run loop, which stops it. */
  events: IdleBoundEvents;
  first: IteratorResult<DriverEvent> | 'idle';
}

/**
 * Events that only add to the record (the UI stream's `finish` is held back anyway): after a step's
 * end, they leave it the run's last.
 */
function recordsOnly(event: DriverEvent): boolean {
  if (event.type === 'chunk') return event.chunk.type === 'finish';
  return event.type !== 'steer-boundary' && event.type !== 'error' && event.type !== 'unavailable';
}

/** Resolves after `ms`, or at once when `signal` aborts. */

async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

export type { Outcome };
