// Reads a `.env` file into the environment before the app starts (scripts/start.mjs), the way
// Docker Compose, Open WebUI and LibreChat are configured: `<repo>/.env`, or the file `ENV_FILE`
// names. `.env.example` lists every variable with its default and meaning.
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * Fills `env` from the file: a variable already set (even to an empty value) wins, since the
 * environment is the operator's last word (as with Compose's `environment:` over `env_file:`).
 * A missing `<root>.env` is fine (a fresh machine has none); a missing `ENV_FILE` stops the start,
 * since someone named it on purpose. Returns the path read, or null when there was none.
 */
export function loadEnvFile(root, env = process.env) {
  const named = env.ENV_FILE?.trim();
  const path = named || `${root}.env`;
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (!named && error?.code === 'ENOENT') return null;
    throw new Error(`Could not read the environment file ${path}: ${error?.message ?? error}`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return path;
}
