import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countTextTokens, encodingOfModel } from '../src/agent/tokenCount';

describe('token counts (C1, C2)', () => {
  it('counts with the encoding of the configured model', () => {
    expect(encodingOfModel('local')).toBe('local_words');
    expect(encodingOfModel('openai:gpt-4.1-mini')).toBe('o200k_base');
    expect(encodingOfModel('openai:gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingOfModel('openai:my-vllm-model')).toBe('o200k_base');
    expect(countTextTokens('hello world', 'o200k_base')).toBe(2);
  });

  it("counts the local model's tokens by words, punctuation and CJK characters, one more per six letters of a long word", () => {
    expect(countTextTokens('', 'local_words')).toBe(0);
    expect(countTextTokens('Hello, world!', 'local_words')).toBe(4);
    expect(countTextTokens('internationalization', 'local_words')).toBe(4);
    expect(countTextTokens('日本語', 'local_words')).toBe(3);
    expect(countTextTokens('  spaces \n and\ttabs  ', 'local_words')).toBe(3);
  });

  it('loads no tokenizer ranks for the local model', () => {
    // A process of its own: this file's workers may have loaded an encoding already.
    const script = [
      "const { countTextTokens, encodingOfModel } = await import('./src/agent/tokenCount.ts');",
      "countTextTokens('The quick brown fox, twice.', encodingOfModel('local'));",
      "const { createRequire } = await import('node:module');",
      'const loaded = Object.keys(createRequire(import.meta.url).cache);',
      "console.log(JSON.stringify(loaded.filter((path) => path.includes('gpt-tokenizer'))));",
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual([]);
  });
});
