import { describe, expect, it } from 'vitest';
import { type LineageBranch, versionsOfActiveBranch } from '../src/chats/branches/lineage';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
const user = (originId: string, second: number) => ({
  originId,
  role: 'user' as const,
  createdAt: at(second),
});
const reply = (originId: string, second: number) => ({
  originId,
  role: 'assistant' as const,
  createdAt: at(second),
});

function branch(branchId: string, lastActive: number, messages: LineageBranch['messages']): LineageBranch {
  return { branchId, lastActiveAt: at(lastActive), messages };
}

describe('versions of user messages (lineage)', () => {
  it('gives no version info to a message without siblings', () => {
    const root = branch('root', 0, [user('u1', 1), reply('a1', 2)]);
    expect(versionsOfActiveBranch([root], 'root').size).toBe(0);
  });

  it('orders versions by creation and shows each through its last selected holder', () => {
    const root = branch('root', 10, [user('u1', 1), reply('a1', 2), user('u2', 3), reply('a2', 4)]);
    const edit = branch('edit', 20, [user('u1', 1), reply('a1', 2), user('u2e', 5), reply('a2e', 6)]);
    const later = branch('later', 30, [
      user('u1', 1),
      reply('a1', 2),
      user('u2', 3),
      reply('a2', 4),
      user('u3', 7),
    ]);
    const versions = versionsOfActiveBranch([root, edit, later], 'edit');
    expect(versions.get('u2e')).toEqual({ index: 2, count: 2, branchIds: ['later', 'edit'] });
    expect(versions.has('u1')).toBe(false);
    // Viewed from the root itself, the root is where its own version is shown.
    expect(versionsOfActiveBranch([root, edit, later], 'root').get('u2')?.branchIds).toEqual([
      'root',
      'edit',
    ]);
  });

  it('drops a version whose last copy was deleted', () => {
    const root = branch('root', 10, [user('u1', 1), reply('a1', 2)]);
    const edit = branch('edit', 20, [user('u1', 1), reply('a1', 2), user('u2e', 5), reply('a2e', 6)]);
    expect(versionsOfActiveBranch([root, edit], 'edit').size).toBe(0);
  });

  it('treats edits of the first message as siblings', () => {
    const root = branch('root', 10, [user('u1', 1), reply('a1', 2)]);
    const edit = branch('edit', 20, [user('u1e', 3), reply('a1e', 4)]);
    expect(versionsOfActiveBranch([root, edit], 'root').get('u1')).toEqual({
      index: 1,
      count: 2,
      branchIds: ['root', 'edit'],
    });
  });
});
