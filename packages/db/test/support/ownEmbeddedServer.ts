// Started as its own process by the tests: starts the embedded server of a data directory, writes
// a row, prints `{"port":N}` and then waits to be killed.
import postgres from 'postgres';
import { startEmbeddedPostgres } from '../../src/embedded';

const [dataDir, passwordFile] = process.argv.slice(2);
if (!dataDir || !passwordFile) throw new Error('usage: ownEmbeddedServer <dataDir> <passwordFile>');
const server = await startEmbeddedPostgres({ dataDir, passwordFile });
const sql = postgres(server.adminUrl, { max: 1, onnotice: () => {} });
await sql`create table if not exists survivors (note text)`;
await sql`insert into survivors values ('written before the kill')`;
await sql.end();
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
setInterval(() => {}, 60_000);
