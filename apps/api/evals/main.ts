import { writeFileSync } from 'node:fs';
import { createTestDatabase, startTestServer } from '@chat/db/testing';
import { runProfile } from './profile';
import { formatReport } from './report';

/**
 * `pnpm eval`: runs the chat-queue-interrupt-ci profile on a fresh, throwaway database (on
 * DATABASE_URL's server, or an embedded PostgreSQL in a temporary directory), prints the table and
 * exits 1 when a threshold is missed.
 *   --json         print the results as JSON instead of the table
 *   --out FILE     also write the JSON results to FILE (a CI artifact)
 *   --model ID     run it with that model of CHAT_MODELS (the default: the first); a real model
 *                  also judges, unless EVAL_JUDGE_MODEL names another
 */
async function main(args: string[]): Promise<number> {
  const json = args.includes('--json');
  const outIndex = args.indexOf('--out');
  const outFile = outIndex >= 0 ? args[outIndex + 1] : undefined;
  if (outIndex >= 0 && !outFile) throw new Error('--out needs a file name');
  const modelIndex = args.indexOf('--model');
  const model = modelIndex >= 0 ? args[modelIndex + 1] : undefined;
  if (modelIndex >= 0 && !model) throw new Error('--model needs a model id (one of CHAT_MODELS)');

  process.env.MASTRA_TELEMETRY_DISABLED ??= '1';
  const server = await startTestServer();
  try {
    const database = await createTestDatabase(server.adminUrl);
    try {
      const result = await runProfile({
        databaseUrl: database.url,
        env: process.env,
        ...(model ? { model } : {}),
      });
      if (outFile) writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(json ? `${JSON.stringify(result, null, 2)}\n` : `${formatReport(result)}\n`);
      return result.passed ? 0 : 1;
    } finally {
      await database.drop();
    }
  } finally {
    await server.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
