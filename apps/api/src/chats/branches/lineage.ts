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

/**
 * Versions of user messages (B1, B2), computed from the transcripts of all of a thread's branches.
 *
 * The conversation is a tree of messages, identified by origin id: a message's parent is the
 * message before it in any branch holding it. User messages sharing a parent are versions of one
 * another, oldest first. A version is shown through the branch holding it that the person had
 * selected last (the active branch when it holds it). Deleted messages are simply absent, so a
 * version disappears with its last copy.
 *
 * Returns the version info of every user message of the active branch that has more than one.
 */
export function versionsOfActiveBranch(
  branches: LineageBranch[],
  activeBranchId: string,
): Map<string, MessageVersion> {
  const siblingsByParent = new Map<string, Map<string, { createdAt: Date; holders: LineageBranch[] }>>();
  for (const branch of branches) {
    branch.messages.forEach((message, index) => {
      if (message.role !== 'user') return;
      const parentKey = index === 0 ? '' : (branch.messages[index - 1]?.originId ?? '');
      let siblings = siblingsByParent.get(parentKey);
      if (!siblings) {
        siblings = new Map();
        siblingsByParent.set(parentKey, siblings);
      }
      const node = siblings.get(message.originId);
      if (node) {
        node.holders.push(branch);
        if (message.createdAt < node.createdAt) node.createdAt = message.createdAt;
      } else siblings.set(message.originId, { createdAt: message.createdAt, holders: [branch] });
    });
  }

  const active = branches.find((branch) => branch.branchId === activeBranchId);
  const versions = new Map<string, MessageVersion>();
  if (!active) return versions;
  active.messages.forEach((message, index) => {
    if (message.role !== 'user') return;
    const parentKey = index === 0 ? '' : (active.messages[index - 1]?.originId ?? '');
    const siblings = siblingsByParent.get(parentKey);
    if (!siblings || siblings.size < 2) return;
    const ordered = [...siblings.entries()].sort(
      ([idA, a], [idB, b]) => a.createdAt.getTime() - b.createdAt.getTime() || idA.localeCompare(idB),
    );
    const branchIds = ordered.map(([, node]) => shownBranch(node.holders, activeBranchId).branchId);
    versions.set(message.originId, {
      index: ordered.findIndex(([originId]) => originId === message.originId) + 1,
      count: ordered.length,
      branchIds,
    });
  });
  return versions;
}

function shownBranch(holders: LineageBranch[], activeBranchId: string): LineageBranch {
  const active = holders.find((branch) => branch.branchId === activeBranchId);
  if (active) return active;
  return holders.reduce((latest, branch) => (branch.lastActiveAt > latest.lastActiveAt ? branch : latest));
}
