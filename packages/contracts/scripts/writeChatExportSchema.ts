import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chatExportJsonSchema } from '../src/chatExportSchema';

/**
 * Writes schema/chat-export.v1.json from the zod schema of the export format (src/chatExport.ts),
 * formatted as the repository's formatter keeps it. Run after changing the format:
 * `pnpm --filter @chat/contracts schema`. The API's tests fail while the checked-in file says
 * something else than this writes.
 */
const target = fileURLToPath(new URL('../schema/chat-export.v1.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(chatExportJsonSchema(), null, 2)}\n`);
execFileSync('biome', ['format', '--write', target], { stdio: 'inherit' });
console.log(`wrote ${target}`);
