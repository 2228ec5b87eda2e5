import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configVariables, loadConfig } from '../src/platform/config';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(`${repoRoot}${path}`, 'utf8');

/**
 * `.env.example` documents each variable as a commented line, `# NAME=default` (empty: unset), so a
 * copy of it changes nothing until a line is uncommented.
 */
const documented = parseEnv(
  read('.env.example')
    .split('\n')
    .flatMap((line) => {
      const assignment = /^#\s?([A-Z][A-Z0-9_]*=.*)$/.exec(line);
      return assignment?.[1] ? [assignment[1]] : [];
    })
    .join('\n'),
);

/** Variables read outside the API's configuration schema, and the file that reads each. */
const OTHER_READERS: Record<string, string> = {
  ENV_FILE: 'scripts/envFile.mjs',
  WEB_PORT: 'scripts/start.mjs',
  NUXT_API_ORIGIN: 'scripts/start.mjs',
  POSTGRES_PASSWORD: 'compose.yaml',
};

/** Defaults that depend on where the app runs, documented in words. */
const DEFAULT_IN_WORDS = new Set(['DATA_DIR', 'API_PROCESSES']);

describe('.env.example lists every variable with its default (it cannot drift from the schema)', () => {
  it('names every variable of the configuration schema, and nothing the app does not read', () => {
    expect(Object.keys(documented).sort()).toEqual(
      [...configVariables, ...Object.keys(OTHER_READERS)].sort(),
    );
    for (const [name, reader] of Object.entries(OTHER_READERS)) expect(read(reader)).toContain(name);
  });

  it('gives each variable the default the schema really has (empty: unset)', () => {
    const defaults = loadConfig({}) as unknown as Record<string, unknown>;
    for (const name of configVariables) {
      if (DEFAULT_IN_WORDS.has(name)) continue;
      const value = documented[name] ?? '';
      const fallback = defaults[name];
      if (value === '') {
        // Unset means nothing, or an empty list or map.
        expect([undefined, '[]', '{}'], name).toContain(
          fallback === undefined ? undefined : JSON.stringify(fallback),
        );
      } else {
        const asDocumented = (loadConfig({ [name]: value }) as unknown as Record<string, unknown>)[name];
        expect(asDocumented, name).toEqual(fallback);
      }
    }
  });

  it("is in the README's configuration table too", () => {
    const readme = read('README.md');
    expect(Object.keys(documented).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('compose.yaml gives the API the whole .env (an optional file)', () => {
    expect(read('compose.yaml')).toMatch(/env_file:\n\s+- path: \.env\n\s+required: false/);
  });
});
