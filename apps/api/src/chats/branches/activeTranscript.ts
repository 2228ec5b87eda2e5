import type { MessageVersion } from '@chat/contracts';
import type { BranchRow, Queryable, ThreadRow } from '@chat/db';
import { InvariantError } from '../../platform/errors';
import { transcriptTables } from '../transcript/tables';
import type { StoredMessage } from '../transcript/transcriptStore';
import { userMessagesWithParents, versionsFromLineage } from './lineage';
import { listSiblingRows } from './lineageRepository';
import { findThreadBranch, listBranchOrigins } from './repository';

/** The active branch's transcript, with the ids the person sees and version info. */
export interface ActiveTranscript {
  branch: BranchRow;
  messages: StoredMessage[];
  /** Stored id -> the id the person sees (its origin). */
  originOf(messageId: string): string;
  versions: Map<string, MessageVersion>;
  /** The transcript's user messages with their parents, by origin id (its lineage rows). */
  userMessages: Array<{ messageId: string; parentId: string; createdAt: Date }>;
}

/**
 * Reads the active branch's messages once (through `q`, so a caller holding the thread lock reads
 * inside its transaction), and the versions of its user messages from the lineage rows of the
 * other branches (no other branch's transcript is read). Linear in the branch's length.
 */
export async function activeTranscript(q: Queryable, thread: ThreadRow): Promise<ActiveTranscript> {
  const activeBranchId = thread.activeBranchId;
  if (!activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
  const [branch, origins] = await Promise.all([
    findThreadBranch(q, thread.id, activeBranchId),
    listBranchOrigins(q, activeBranchId),
  ]);
  if (!branch) throw new InvariantError(`thread ${thread.id} has no active branch`);
  const messages = await transcriptTables.readBranchMessages(q, branch.memoryThreadId);
  const originOf = (messageId: string) => origins.get(messageId) ?? messageId;
  const userMessages = userMessagesWithParents(
    messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({
        originId: originOf(message.id),
        role: message.role,
        createdAt: message.createdAt,
      })),
  );
  const others = await listSiblingRows(q, thread.id, branch.id, userMessages);
  const versions = versionsFromLineage(
    { branchId: branch.id, lastActiveAt: branch.lastActiveAt },
    userMessages,
    others,
  );
  return { branch, messages, originOf, versions, userMessages };
}
