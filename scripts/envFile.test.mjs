// node --test scripts/: the `.env` file scripts/start.mjs reads before anything else (envFile.mjs).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadEnvFile } from './envFile.mjs';

function withDir(run) {
  const dir = `${mkdtempSync(join(tmpdir(), 'env-file-'))}/`;
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a .env beside the app fills what is unset, and what is set wins (even when empty)', () => {
  withDir((root) => {
    writeFileSync(
      `${root}.env`,
      '# a comment\nCHAT_MODEL=openai:llama3.1\nAPI_PORT=4001\nLOG_LEVEL=debug\nQUOTED="a b # c"\n',
    );
    const env = { API_PORT: '5001', LOG_LEVEL: '' };
    assert.equal(loadEnvFile(root, env), `${root}.env`);
    assert.deepEqual(env, {
      API_PORT: '5001',
      LOG_LEVEL: '',
      CHAT_MODEL: 'openai:llama3.1',
      QUOTED: 'a b # c',
    });
  });
});

test('a fresh machine has no .env: nothing is read and nothing fails', () => {
  withDir((root) => {
    const env = { API_PORT: '5001' };
    assert.equal(loadEnvFile(root, env), null);
    assert.deepEqual(env, { API_PORT: '5001' });
  });
});

test('ENV_FILE names another file; a missing one stops the start with its path', () => {
  withDir((root) => {
    writeFileSync(`${root}.env`, 'FROM=default\n');
    writeFileSync(`${root}other.env`, 'FROM=other\n');
    const env = { ENV_FILE: `${root}other.env` };
    loadEnvFile(root, env);
    assert.equal(env.FROM, 'other');
    assert.throws(() => loadEnvFile(root, { ENV_FILE: `${root}missing.env` }), /missing\.env/);
  });
});
