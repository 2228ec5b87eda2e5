import type { MessageVersion } from '@chat/contracts';

/** One message of a branch's transcript, as lineage sees it. */
export interface LineageMessage {
  /** The id the person sees: the message it was first created as (stable across copies). */
  originId: string;
  role: 'user' | 'assistant' | 'system' | 'signal';
  createdAt: Date;
}

export interface LineageBranch {
  branchId: string;
  lastActiveAt: Date;
  /** The branch's transcript, oldest first. */
  messages: LineageMessage[];
}

/** One user message held by one live branch (a `message_lineage` row and its branch). */
export interface LineageRow {
  branchId: string;
  lastActiveAt: Date;
  /** The user message's origin id. */
  messageId: string;
  /** The origin id of the message before it in that branch; '' when it is the first. */
  parentId: string;
  createdAt: Date;
}

/**
 * Versions of user messages (B1, B2).
 *
 * The conversation is a tree of messages, identified by origin id: a message's parent is the
 * message before it in any branch holding it. User messages sharing a parent are versions of one
 * another, oldest first. A version is shown through the branch holding it that the person had
 * selected last (the active branch when it holds it). Deleted messages are simply absent, so a
 * version disappears with its last copy.
 *
 * `shown` are the active branch's user messages; `others` the lineage rows of other live branches
 * whose parent is one of theirs (lineageRepository.ts lists exactly those). Returns the version
 * info of every shown user message that has more than one version.
 */
export function versionsFromLineage(
  activeBranch: { branchId: string; lastActiveAt: Date },
  shown: ReadonlyArray<{ messageId: string; parentId: string; createdAt: Date }>,
  others: readonly LineageRow[],
): Map<string, MessageVersion> {
  const siblingsByParent = new Map<string, Map<string, { createdAt: Date; holders: LineageRow[] }>>();
  const add = (row: LineageRow) => {
    let siblings = siblingsByParent.get(row.parentId);
    if (!siblings) {
      siblings = new Map();
      siblingsByParent.set(row.parentId, siblings);
    }
    const node = siblings.get(row.messageId);
    if (node) {
      node.holders.push(row);
      if (row.createdAt < node.createdAt) node.createdAt = row.createdAt;
    } else siblings.set(row.messageId, { createdAt: row.createdAt, holders: [row] });
  };
  for (const row of others) add(row);
  const versions = new Map<string, MessageVersion>();
  if (siblingsByParent.size === 0) return versions;
  // Only the shown messages that have other versions are looked at (a handful of a long chat's):
  // a transcript holds each message once, so no other shown message shares their parent.
  const withOthers = shown.filter((message) => siblingsByParent.has(message.parentId));
  for (const message of withOthers) add({ ...activeBranch, ...message });

  for (const message of withOthers) {
    const siblings = siblingsByParent.get(message.parentId);
    if (!siblings || siblings.size < 2) continue;
    const ordered = [...siblings.entries()].sort(
      ([idA, a], [idB, b]) => a.createdAt.getTime() - b.createdAt.getTime() || idA.localeCompare(idB),
    );
    const branchIds = ordered.map(([, node]) => shownBranch(node.holders, activeBranch.branchId).branchId);
    versions.set(message.messageId, {
      index: ordered.findIndex(([originId]) => originId === message.messageId) + 1,
      count: ordered.length,
      branchIds,
    });
  }
  return versions;
}

/** The user messages of a transcript with their parents, as lineage rows name them. */
export function userMessagesWithParents(
  messages: readonly LineageMessage[],
): Array<{ messageId: string; parentId: string; createdAt: Date }> {
  const users: Array<{ messageId: string; parentId: string; createdAt: Date }> = [];
  messages.forEach((message, index) => {
    if (message.role !== 'user') return;
    users.push({
      messageId: message.originId,
      parentId: index === 0 ? '' : (messages[index - 1]?.originId ?? ''),
      createdAt: message.createdAt,
    });
  });
  return users;
}

/**
 * The same, from the full transcripts of all of a thread's live branches (what the lineage rows
 * record; kept for the unit tests of the rule).
 */
export function versionsOfActiveBranch(
  branches: LineageBranch[],
  activeBranchId: string,
): Map<string, MessageVersion> {
  const active = branches.find((branch) => branch.branchId === activeBranchId);
  if (!active) return new Map();
  const shown = userMessagesWithParents(active.messages);
  const shownIds = new Set(shown.map((message) => message.messageId));
  const shownParents = new Set(shown.map((message) => message.parentId));
  const others = branches
    .filter((branch) => branch.branchId !== activeBranchId)
    .flatMap((branch) =>
      userMessagesWithParents(branch.messages).map((message) => ({
        branchId: branch.branchId,
        lastActiveAt: branch.lastActiveAt,
        ...message,
      })),
    )
    .filter((row) => shownParents.has(row.parentId) && !shownIds.has(row.messageId));
  return versionsFromLineage({ branchId: active.branchId, lastActiveAt: active.lastActiveAt }, shown, others);
}

function shownBranch(holders: LineageRow[], activeBranchId: string): LineageRow {
  const active = holders.find((holder) => holder.branchId === activeBranchId);
  if (active) return active;
  return holders.reduce((latest, holder) => (holder.lastActiveAt > latest.lastActiveAt ? holder : latest));
}
