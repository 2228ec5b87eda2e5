import type { MessageVersion } from '@chat/contracts';
import type { BranchRow, Queryable, ThreadRow } from '@chat/db';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { Memory } from '@mastra/memory';
import { InvariantError } from '../../platform/errors';
import { versionsOfActiveBranch } from './lineage';
import { listLiveBranches, listMessageOrigins } from './repository';
import { recallBranch } from './transcript';

/** The active branch's transcript, with the ids the person sees and version info. */
export interface ActiveTranscript {
  branch: BranchRow;
  messages: MastraDBMessage[];
  /** Stored id -> the id the person sees (its origin). */
  originOf(messageId: string): string;
  versions: Map<string, MessageVersion>;
}

/**
 * Reads every live branch of the thread once (through `q`, so a caller holding the thread lock
 * reads inside its transaction) and computes the versions of the active branch's messages.
 */
export async function activeTranscript(
  q: Queryable,
  memory: Memory,
  thread: ThreadRow,
): Promise<ActiveTranscript> {
  const [branches, origins] = await Promise.all([
    listLiveBranches(q, thread.id),
    listMessageOrigins(q, thread.id),
  ]);
  const active = branches.find((branch) => branch.id === thread.activeBranchId);
  if (!active) throw new InvariantError(`thread ${thread.id} has no active branch`);
  const transcripts = await Promise.all(
    branches.map((branch) => recallBranch(memory, branch.memoryThreadId)),
  );
  const originOf = (messageId: string) => origins.get(messageId) ?? messageId;
  const versions = versionsOfActiveBranch(
    branches.map((branch, i) => ({
      branchId: branch.id,
      lastActiveAt: branch.lastActiveAt,
      messages: (transcripts[i] ?? []).map((message) => ({
        originId: originOf(message.id),
        role: message.role,
        createdAt: message.createdAt,
      })),
    })),
    active.id,
  );
  const messages = transcripts[branches.indexOf(active)] ?? [];
  return { branch: active, messages, originOf, versions };
}
