import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The API's layers, lowest first (docs/architecture.md). A file may import its own layer or a
 * lower one, never a higher one. Inside the turn engine each lifecycle is a layer of its own, in
 * the order they use one another.
 */
const layers: Array<[layer: string, matches: (path: string) => boolean]> = [
  ['platform', (path) => path.startsWith('platform/')],
  ['chats/transcript: the transcript store', (path) => path.startsWith('chats/transcript/')],
  ['agent and auth', (path) => path.startsWith('agent/') || path.startsWith('auth/')],
  [
    'chats/threads and account SQL',
    (path) => path.startsWith('chats/threads/') || path === 'accounts/repository.ts',
  ],
  ['chats/attachments', (path) => path.startsWith('chats/attachments/')],
  ['chats/branches', (path) => path.startsWith('chats/branches/')],
  ['chats/turns/driver: the runtime driver seam', (path) => path.startsWith('chats/turns/driver/')],
  [
    'chats/turns: turn rows, their lifecycle and marks',
    (path) => /^chats\/turns\/[^/]+\.ts$/.test(path) && path !== 'chats/turns/settledMessages.ts',
  ],
  ['chats/turns/queue', (path) => path.startsWith('chats/turns/queue/')],
  ['chats/turns/steer', (path) => path.startsWith('chats/turns/steer/')],
  ['chats/turns/context', (path) => path.startsWith('chats/turns/context/')],
  // A run's lifecycles: the stream to subscribers, settling (with reply repair and recovery), the
  // claim, then the run itself, which uses all three.
  ['chats/turns/stream', (path) => path.startsWith('chats/turns/stream/')],
  ['chats/turns/settle', (path) => path.startsWith('chats/turns/settle/')],
  ['chats/turns/claim', (path) => path.startsWith('chats/turns/claim/')],
  ['chats/turns/running', (path) => path.startsWith('chats/turns/running/')],
  ['chats/turns/drain', (path) => path.startsWith('chats/turns/drain/')],
  [
    'chats/turns/approval and accepting',
    (path) => path.startsWith('chats/turns/approval/') || path.startsWith('chats/turns/accepting/'),
  ],
  [
    'chats/turns/interrupt and the settled messages',
    (path) => path.startsWith('chats/turns/interrupt/') || path === 'chats/turns/settledMessages.ts',
  ],
  [
    "chats/detail: the thread detail's shown transcript and its cache",
    (path) => path.startsWith('chats/detail/'),
  ],
  [
    'chats/shares, chats/feedback',
    (path) => path.startsWith('chats/shares/') || path.startsWith('chats/feedback/'),
  ],
  ['chats/portability', (path) => path.startsWith('chats/portability/')],
  [
    'chat and account services',
    (path) =>
      /^chats\/[^/]+\.ts$/.test(path) ||
      path === 'accounts/accountService.ts' ||
      path === 'accounts/guestSweep.ts' ||
      path === 'accounts/device.ts',
  ],
  ['routes: the one HTTP edge', (path) => path.startsWith('routes/')],
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

/** Every relative import of `files` (path under src -> its text) that points to a higher layer. */
function upwardImports(files: Map<string, string>): string[] {
  const upward: string[] = [];
  for (const [file, text] of files) {
    for (const [, target] of text.matchAll(/from '(\.[^']+)'/g)) {
      const imported = `${relative(src, resolve(src, dirname(file), target as string))}.ts`;
      if (rankOf(imported) > rankOf(file)) upward.push(`${file} -> ${imported}`);
    }
  }
  return upward;
}

/**
 * The two folders that may know the agent framework (docs/architecture.md): the transcript store's
 * implementation on Mastra memory, and the Mastra runtime driver. The rest of the host talks to
 * their seams (TranscriptStore, RuntimeDriver).
 */
const FRAMEWORK_FOLDERS = ['chats/transcript/mastra/', 'chats/turns/driver/mastra/'];

/** Every file of `files` outside the framework folders that imports an `@mastra/` package. */
function frameworkImports(files: Map<string, string>): string[] {
  return [...files]
    .filter(([file]) => !FRAMEWORK_FOLDERS.some((folder) => file.startsWith(folder)))
    .filter(([, text]) => /(?:from|import)\s*\(?\s*'@mastra\//.test(text))
    .map(([file]) => file);
}

/** The one folder that may know the Claude Code agent SDK: its runtime driver (ADR-044). */
const AGENT_SDK_FOLDER = 'chats/turns/driver/claudeCode/';

/** Every file of `files` outside the Claude Code driver that imports the agent SDK. */
function agentSdkImports(files: Map<string, string>): string[] {
  return [...files]
    .filter(([file]) => !file.startsWith(AGENT_SDK_FOLDER))
    .filter(([, text]) => /(?:from|import)\s*\(?\s*'@anthropic-ai\/claude-agent-sdk/.test(text))
    .map(([file]) => file);
}

describe('apps/api/src layering', () => {
  it('has no file importing from a layer above its own', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(upwardImports(files)).toEqual([]);
  });

  it('imports @mastra/ only in the transcript store on Mastra and the Mastra driver', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(frameworkImports(files)).toEqual([]);
  });

  it('reports a framework import outside its folders, type-only ones too (the check itself can fail)', () => {
    const files = new Map([
      ['chats/turns/running/runner.ts', "import type { Memory } from '@mastra/memory';"],
      ['chats/branchService.ts', "import { Agent } from '@mastra/core/agent';"],
      ['chats/transcript/mastra/mastraTranscript.ts', "import type { Memory } from '@mastra/memory';"],
      ['chats/turns/driver/mastra/mastraDriver.ts', "import { Agent } from '@mastra/core/agent';"],
      ['chats/threads/notes.ts', '// a comment naming @mastra/memory is no import'],
    ]);
    expect(frameworkImports(files)).toEqual(['chats/turns/running/runner.ts', 'chats/branchService.ts']);
  });

  it('imports the Claude Code agent SDK only in its driver', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(agentSdkImports(files)).toEqual([]);
  });

  it('reports an agent SDK import outside its driver, type-only ones too (the check itself can fail)', () => {
    const files = new Map([
      ['chats/turns/running/runner.ts', "import type { Query } from '@anthropic-ai/claude-agent-sdk';"],
      [
        'chats/turns/driver/claudeCode/agentSession.ts',
        "import { query } from '@anthropic-ai/claude-agent-sdk';",
      ],
      ['chats/turns/driver/choice.ts', "const sdk = await import('@anthropic-ai/claude-agent-sdk');"],
    ]);
    expect(agentSdkImports(files)).toEqual(['chats/turns/running/runner.ts', 'chats/turns/driver/choice.ts']);
  });

  it('reports an import that points up (the check itself can fail)', () => {
    const files = new Map([
      ['chats/turns/queue/order.ts', "import { TurnRunner } from '../running/runner';"],
      ['chats/turns/driver/types.ts', "import type { TurnRow } from '../repository';"],
      ['chats/threads/repository.ts', "import { QueueService } from '../turns/queue/queueService';"],
    ]);
    expect(upwardImports(files)).toEqual([
      'chats/turns/queue/order.ts -> chats/turns/running/runner.ts',
      'chats/turns/driver/types.ts -> chats/turns/repository.ts',
      'chats/threads/repository.ts -> chats/turns/queue/queueService.ts',
    ]);
  });
});
