import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Thread, WorkspaceList } from '@chat/contracts';
import { turnErrorMessages } from '@chat/contracts';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEmail, type Refusal, signUp } from './support/accounts';
import type { ApiClient } from './support/client';
import { textOfChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi, turnRow } from './support/testApi';

/**
 * A1: a workspace is never shared between accounts. The first account to start an agent chat on a
 * workspace takes it; every other account no longer sees it listed and is refused one there, even
 * when both ask at once; it moves with a guest who signs up, and is free again once its account is
 * deleted. No agent runs here: the claims are the API's and the database's.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let scratch: string;
let api: TestApi;
const workspaces: string[] = [];

async function signedUp(): Promise<ApiClient> {
  const client = await api.client();
  expect((await signUp(client, newEmail())).status).toBe(200);
  return client;
}

async function listed(client: ApiClient): Promise<string[]> {
  const { status, body } = await client.json<WorkspaceList>('GET', '/api/workspaces');
  expect(status).toBe(200);
  return body.workspaces.map((workspace) => workspace.label);
}

/** Every configured workspace's id, as the first account to look sees them (none taken yet). */
let ids: Record<string, string> = {};

function agentChatOn(client: ApiClient, label: string) {
  return client.json<Thread & Refusal & { error: { reason?: string } }>('POST', '/api/threads', {
    workspaceId: ids[label],
  });
}

beforeAll(async () => {
  database = await freshDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'agent-workspaces-'));
  for (const name of ['alpha', 'beta', 'gamma', 'delta']) {
    const path = join(scratch, name);
    await mkdir(path);
    workspaces.push(path);
  }
  api = await startTestApi(database.url, {
    AGENT_WORKSPACES: workspaces.join(','),
    AGENT_GUESTS: 'true',
    AGENT_BASE_URL: 'http://127.0.0.1:9',
    AGENT_API_KEY: 'unused',
    DATA_DIR: join(scratch, 'data'),
  });
  const first = await signedUp();
  const { body } = await first.json<WorkspaceList>('GET', '/api/workspaces');
  ids = Object.fromEntries(body.workspaces.map((workspace) => [workspace.label, workspace.id]));
  expect(Object.keys(ids).sort()).toEqual(['alpha', 'beta', 'delta', 'gamma']);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await database?.drop();
  await rm(scratch, { recursive: true, force: true });
});

describe('a workspace kept to one account (A1)', () => {
  it("is taken by an account's first agent chat: others no longer see it and are refused one there", async () => {
    const owner = await signedUp();
    const other = await signedUp();
    expect((await agentChatOn(owner, 'alpha')).status).toBe(201);
    // The owner's second chat there is no new claim.
    expect((await agentChatOn(owner, 'alpha')).status).toBe(201);
    expect(await listed(owner)).toContain('alpha');
    expect(await listed(other)).not.toContain('alpha');

    const before = (await other.threadPage({ limit: 50 })).threads.length;
    const refused = await agentChatOn(other, 'alpha');
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'workspace_refused', reason: 'taken' });
    expect((await other.threadPage({ limit: 50 })).threads.length).toBe(before);
    // A workspace nobody has taken is still everyone's to take.
    expect((await agentChatOn(other, 'beta')).status).toBe(201);
    expect(await listed(owner)).not.toContain('beta');
  });

  it('goes to exactly one of two accounts asking for it at once', async () => {
    const [one, two] = await Promise.all([signedUp(), signedUp()]);
    const answers = await Promise.all([agentChatOn(one, 'gamma'), agentChatOn(two, 'gamma')]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422]);
    const winner = answers[0].status === 201 ? one : two;
    const loser = winner === one ? two : one;
    expect(await listed(winner)).toContain('gamma');
    expect(await listed(loser)).not.toContain('gamma');
  });

  it('moves with a guest who signs up, and is free again once its account is deleted', async () => {
    const guest = await api.client();
    expect((await agentChatOn(guest, 'delta')).status).toBe(201);
    expect((await signUp(guest, newEmail())).status).toBe(200);
    // The signed-up account has it (asked first by another, so a claim freed by the link would show).
    const other = await signedUp();
    expect(await listed(other)).not.toContain('delta');
    expect((await agentChatOn(other, 'delta')).status).toBe(422);
    expect(await listed(guest)).toContain('delta');
    expect((await agentChatOn(guest, 'delta')).status).toBe(201);

    expect((await guest.json('DELETE', '/api/account')).status).toBe(200);
    expect(await listed(other)).toContain('delta');
    expect((await agentChatOn(other, 'delta')).status).toBe(201);
  });

  it('does not run an agent chat on a workspace another account holds (a chat made before workspaces were kept to one)', async () => {
    const holder = await signedUp();
    const earlier = await signedUp();
    expect((await agentChatOn(earlier, 'alpha')).status).toBe(422);
    // Made as an older server would have: on alpha, which `owner` of the first test holds.
    const plain = await earlier.json<Thread>('POST', '/api/threads', {});
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql`UPDATE threads SET workspace_id = ${ids.alpha ?? ''}, workspace_path = ${workspaces[0] ?? ''} WHERE id = ${plain.body.id}`;
    } finally {
      await sql.end();
    }
    const { turnId, chunks } = await earlier.sendAndRead(plain.body.id, 'hello [[words:3]]');
    expect(JSON.stringify(chunks)).toContain(turnErrorMessages.agentWorkspaceTaken);
    expect(textOfChunks(chunks)).toBe('');
    expect((await turnRow(api, turnId))?.status).toBe('failed');
    expect(await listed(holder)).not.toContain('alpha');
  });
});
