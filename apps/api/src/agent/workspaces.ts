import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, relative, sep } from 'node:path';
import type { AgentWorkspace } from '@chat/contracts';
import { ApiError } from '../platform/errors';

/**
 * A1: the server directories agent chats may work in (`AGENT_WORKSPACES`), and the one rule of
 * whether a directory is inside one of them. A directory counts by where it really is (symlinks
 * resolved), checked when the chat is made and again before each run, so a link swapped later
 * cannot lead the agent out. Empty: agent chats are off.
 */
export class AgentWorkspaces {
  private constructor(private readonly roots: ReadonlyArray<AgentWorkspace & { path: string }>) {}

  /** The configured directories; one that does not exist (now) is left out of the list. */
  static async from(paths: readonly string[]): Promise<AgentWorkspaces> {
    const roots: Array<AgentWorkspace & { path: string }> = [];
    for (const configured of paths) {
      const path = await realDirectory(configured);
      if (!path) continue;
      roots.push({ id: workspaceId(configured), label: basename(path) || path, path });
    }
    return new AgentWorkspaces(roots);
  }

  get enabled(): boolean {
    return this.roots.length > 0;
  }

  /** The workspaces a person picks from (never their paths). */
  list(): AgentWorkspace[] {
    return this.roots.map(({ id, label }) => ({ id, label }));
  }

  /**
   * The directory an agent chat on `workspaceId` works in: `directory` (absolute, inside the
   * workspace) or the workspace itself. `404 not_found` for a workspace not on the list;
   * `422 workspace_refused` for a directory outside it, a symlink out of it, or none at all.
   */
  async resolve(
    workspaceId: string,
    directory?: string,
  ): Promise<{ workspace: AgentWorkspace; path: string }> {
    const root = this.roots.find((candidate) => candidate.id === workspaceId);
    if (!root) throw new ApiError('not_found', 'There is no such workspace here.');
    if (directory !== undefined && !isAbsolute(directory)) {
      throw refused('not_absolute', 'The directory must be an absolute path.');
    }
    const path = await realDirectory(directory ?? root.path);
    if (!path) throw refused('missing', 'There is no such directory on the server.');
    if (!inside(root.path, path)) {
      throw refused('outside', 'That directory is outside the workspace (symlinks count where they lead).');
    }
    return { workspace: { id: root.id, label: root.label }, path };
  }

  /** Before a run: the chat's directory is still a directory inside a configured workspace. */
  async check(workspaceId: string, path: string): Promise<string> {
    const root = this.roots.find((candidate) => candidate.id === workspaceId);
    const real = await realDirectory(path);
    if (!root || !real || !inside(root.path, real)) {
      throw new Error("the agent chat's directory is no longer inside a configured workspace");
    }
    return real;
  }
}

/** A stable id of a configured workspace that does not show its path. */
function workspaceId(configured: string): string {
  return createHash('sha256').update(configured).digest('hex').slice(0, 16);
}

/** Where `path` really is, when it is a directory; undefined otherwise. */
async function realDirectory(path: string): Promise<string | undefined> {
  try {
    const real = await realpath(path);
    return (await stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

function inside(root: string, path: string): boolean {
  const within = relative(root, path);
  return within === '' || (!within.startsWith(`..${sep}`) && within !== '..' && !isAbsolute(within));
}

function refused(reason: 'not_absolute' | 'missing' | 'outside', message: string): ApiError {
  return new ApiError('workspace_refused', message, { reason });
}
