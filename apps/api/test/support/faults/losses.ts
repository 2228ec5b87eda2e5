import type { ChatMessage, ThreadDetail } from '@chat/contracts';
import { textOfMessage } from '../client';
import type { Fault } from './lab';
import type { OwnedPostgres } from './ownedPostgres';
import type { StreamView } from './streamView';

/**
 * The ceiling the suite holds the hard-kill bound to. The bound itself is in events: a kill loses
 * only the text that streamed while the one checkpoint write in flight was under way (checkpoints
 * follow the stream write after write, not on a timer), and never a finished step; in time that is
 * one database commit. Checked with the client's arrival times, which only favour the server: a
 * delta that arrived before `t` was sent before `t`.
 */
export const KILL_BOUND_MS = 200;

/** A send the API answered (`200` with a stream, or `202` queued): accepted, so it must be kept. */
export interface AcceptedSend {
  text: string;
  turnId: string;
  status: number;
}

/** What one fault case left behind: a thread, what its client was told, and what it saw. */
export interface Evidence {
  threadId: string;
  sends: AcceptedSend[];
  views: StreamView[];
  fault: Fault;
}

interface TurnRecord {
  id: string;
  status: string;
  steer: boolean;
  text: string;
  user_message_id: string | null;
  assistant_message_id: string | null;
  removed_at: Date | null;
}

const FINAL = new Set(['completed', 'interrupted', 'failed']);

/**
 * The fault suite's one invariant, checked after recovery: every accepted send is in the
 * transcript or in the queue; every reply is stored up to the bound behind what its client saw
 * streamed (all of it when the process lived through the fault), its tool steps included; no turn
 * in a final state (and no delivered steer) points at messages that are not stored; nothing is
 * left running or pending. Returns each loss in words (empty: nothing was lost).
 */
export async function findLosses(
  postgres: OwnedPostgres,
  detail: ThreadDetail,
  evidence: Evidence,
): Promise<string[]> {
  const losses: string[] = [];
  const rows = await postgres.query(
    (sql) => sql<TurnRecord[]>`
      select id, status, steer, text, user_message_id, assistant_message_id, removed_at
      from chat_turn_requests where thread_id = ${evidence.threadId} order by seq`,
  );
  const messageIds = rows.flatMap((row) => [row.user_message_id, row.assistant_message_id]);
  const stored = new Set(
    (
      await postgres.query(
        (sql) => sql<{ id: string }[]>`
          select id from mastra.mastra_messages
          where id = any(${messageIds.filter((id): id is string => id !== null)})`,
      )
    ).map((row) => row.id),
  );

  // Every accepted send is in the transcript or in the queue.
  const transcriptTexts = new Set(
    detail.messages.filter((message) => message.role === 'user').map(textOfMessage),
  );
  const queue = [detail.turnQueue.activeTurn, ...detail.turnQueue.items].filter((turn) => turn !== null);
  const queueTexts = new Set(queue.map((turn) => turn.text));
  for (const send of evidence.sends) {
    if (transcriptTexts.has(send.text) || queueTexts.has(send.text)) continue;
    const row = rows.find((candidate) => candidate.id === send.turnId);
    losses.push(
      `the send "${send.text}" was accepted (${send.status}) but is in neither the transcript nor the queue ` +
        `(its turn is ${row ? `${row.status}, user message ${row.user_message_id ?? 'none'}` : 'gone'})`,
    );
  }

  // No final state points at messages that are not stored; nothing is left running or pending.
  for (const row of rows) {
    if (row.removed_at) continue;
    const missing = (id: string | null) => id !== null && !stored.has(id);
    if (FINAL.has(row.status) || row.status === 'delivered') {
      if (!row.user_message_id)
        losses.push(`turn ${row.id} is ${row.status} with no user message ("${row.text}")`);
      else if (missing(row.user_message_id))
        losses.push(
          `turn ${row.id} is ${row.status} but its user message ${row.user_message_id} ("${row.text}") is not stored`,
        );
    }
    if (FINAL.has(row.status) && missing(row.assistant_message_id))
      losses.push(`turn ${row.id} is ${row.status} but its reply ${row.assistant_message_id} is not stored`);
    if (row.status === 'running')
      losses.push(`turn ${row.id} is still running after recovery (nothing settles it)`);
    if (row.status === 'steer_pending' && !rows.some((other) => other.status === 'running'))
      losses.push(`steer ${row.id} is still pending with no reply running to take it`);
  }

  // Every reply is stored up to the bound behind what its client saw.
  const delivered = new Set(
    rows.filter((row) => row.steer && row.status === 'delivered').map((row) => row.id),
  );
  const byTurn = new Map<string, StreamView[]>();
  for (const view of evidence.views) byTurn.set(view.turnId, [...(byTurn.get(view.turnId) ?? []), view]);
  for (const [turnId, views] of byTurn) {
    const row = rows.find((candidate) => candidate.id === turnId);
    const replies = repliesOf(detail.messages, turnId, delivered);
    const storedText = normalise(replies.map(textOfMessage).join(' '));
    const seenText = normalise(views.flatMap((view) => view.textSeen()).join(' '));
    const required = normalise(
      views.flatMap((view) => view.textSeen(mustBeStoredBefore(view, evidence.fault))).join(' '),
    );
    const where = `turn ${turnId} (${row?.status ?? 'no row'})`;
    if (!storedText.startsWith(required)) {
      losses.push(
        `${where}: the client saw ${words(required)} words that had to be kept, but ${words(storedText)} are stored` +
          ` (kept up to "…${tail(commonPrefix(storedText, required))}", seen "…${tail(required)}")`,
      );
    } else if (!seenText.startsWith(storedText) && !storedText.startsWith(seenText)) {
      losses.push(`${where}: the stored reply is not what was streamed ("…${tail(storedText)}")`);
    }
    const storedTools = new Set(
      replies.flatMap((message) =>
        message.parts.map((part) => part.toolCallId).filter((id) => typeof id === 'string'),
      ),
    );
    const requiredTools = views.flatMap((view) =>
      view.toolResultsSeen(mustBeStoredBefore(view, evidence.fault)),
    );
    const lostTools = requiredTools.filter((id) => !storedTools.has(id));
    if (lostTools.length > 0)
      losses.push(
        `${where}: ${lostTools.length} of the ${requiredTools.length} tool steps the client saw are not stored`,
      );
    const told = views.find((view) => view.finish && !view.finish.interrupted && view.errors.length === 0);
    if (told && !views.some((view) => view.approvalRequested) && row && row.status !== 'completed')
      losses.push(`${where}: the client was told the reply finished, but the turn ended ${row.status}`);
  }
  return losses;
}

/**
 * Before when the text a view saw must be stored. The process lived through an outage (or there
 * was no fault): all of it. A kill: all of what streamed before it ended normally or started after the kill; otherwise
 * what came before the bound (the kill's `boundMs`, or the last step end, whichever is later).
 */
function mustBeStoredBefore(view: StreamView, fault: Fault): number {
  if (fault.kind !== 'kill') return Number.POSITIVE_INFINITY;
  const ended = view.finish ?? (view.approvalRequested ? { at: 0 } : undefined);
  if (ended && ended.at < fault.at) return Number.POSITIVE_INFINITY;
  if (view.startedAt > fault.at) return Number.POSITIVE_INFINITY;
  return Math.max(fault.at - fault.boundMs, view.lastStepEndBefore(fault.at));
}

/**
 * A turn's replies in the transcript: the assistant messages after its user message, up to the next
 * user message that is not a steer it took in.
 */
function repliesOf(messages: ChatMessage[], turnId: string, deliveredSteers: Set<string>): ChatMessage[] {
  const start = messages.findIndex(
    (message) => message.role === 'user' && message.metadata.turnId === turnId,
  );
  if (start < 0) return [];
  const replies: ChatMessage[] = [];
  for (const message of messages.slice(start + 1)) {
    if (message.role === 'assistant') replies.push(message);
    else if (!deliveredSteers.has(String(message.metadata.turnId))) break;
  }
  return replies;
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function words(text: string): number {
  return text === '' ? 0 : text.split(' ').length;
}

function commonPrefix(a: string, b: string): string {
  let index = 0;
  while (index < a.length && a[index] === b[index]) index += 1;
  return a.slice(0, index);
}

function tail(text: string): string {
  return text.slice(-40);
}
