import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The API's layers, lowest first (docs/architecture.md). A file may import its own layer or a
 * lower one, never a higher one.
 */
const layers: Array<[layer: string, matches: (path: string) => boolean]> = [
  ['platform', (path) => path.startsWith('platform/')],
  ['agent and auth', (path) => path.startsWith('agent/') || path.startsWith('auth/')],
  [
    'chats/threads and account SQL',
    (path) => path.startsWith('chats/threads/') || path === 'accounts/repository.ts',
  ],
  ['chats/attachments', (path) => path.startsWith('chats/attachments/')],
  ['chats/branches', (path) => path.startsWith('chats/branches/')],
  ['chats/turns', (path) => path.startsWith('chats/turns/')],
  [
    'chats/shares, chats/feedback',
    (path) => path.startsWith('chats/shares/') || path.startsWith('chats/feedback/'),
  ],
  [
    'chat and account services',
    (path) =>
      /^chats\/[^/]+\.ts$/.test(path) ||
      path === 'accounts/accountService.ts' ||
      path === 'accounts/guestSweep.ts' ||
      path === 'accounts/device.ts',
  ],
  ['routes', (path) => path.startsWith('chats/routes/') || path === 'accounts/routes.ts'],
  ['app and wiring', (path) => /^[^/]+\.ts$/.test(path)],
];

const src = fileURLToPath(new URL('../src/', import.meta.url));

function rankOf(path: string): number {
  const rank = layers.findIndex(([, matches]) => matches(path));
  if (rank < 0) throw new Error(`${path} is in no layer`);
  return rank;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path)] : [];
  });
}

describe('apps/api/src layering', () => {
  it('has no file importing from a layer above its own', () => {
    const upward: string[] = [];
    for (const file of sourceFiles(src)) {
      const text = readFileSync(join(src, file), 'utf8');
      for (const [, target] of text.matchAll(/from '(\.[^']+)'/g)) {
        const imported = `${relative(src, resolve(src, dirname(file), target as string))}.ts`;
        if (rankOf(imported) > rankOf(file)) upward.push(`${file} -> ${imported}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
