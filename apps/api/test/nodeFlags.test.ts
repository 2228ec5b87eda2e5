import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_NODE_FLAGS } from '../nodeFlags.mjs';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/**
 * The built API runs with the same Node flags however it is started (the idle memory figure
 * depends on them). scripts/start.mjs and the benchmark import the list; the two places that
 * cannot import it spell it out, and are checked here.
 */
describe('the API is started with its Node flags everywhere', () => {
  it('has flags to check', () => {
    expect(API_NODE_FLAGS.length).toBeGreaterThan(0);
  });

  it('`pnpm start` passes them before the bundle', () => {
    const start = JSON.parse(read('apps/api/package.json')).scripts.start as string;
    expect(start).toContain(`node ${API_NODE_FLAGS.join(' ')} dist/main.mjs`);
  });

  it('compose.yaml passes them before the bundle', () => {
    const command = read('compose.yaml')
      .split('\n')
      .find((line) => line.includes('dist/main.mjs'));
    const parts = ['node', ...API_NODE_FLAGS, 'dist/main.mjs'].map((part) => JSON.stringify(part));
    expect(command).toContain(`[${parts.join(', ')}]`);
  });

  it('scripts/start.mjs and the benchmark use the list itself', () => {
    expect(read('scripts/start.mjs')).toContain('...API_NODE_FLAGS');
    expect(read('bench/src/processes.ts')).toContain('...API_NODE_FLAGS');
  });
});
