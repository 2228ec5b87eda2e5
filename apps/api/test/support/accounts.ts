import type { Account, Thread, ThreadPage } from '@chat/contracts';
import { expect } from 'vitest';
import { type ApiClient, readUntilWords } from './client';

/** Accounts over real HTTP: sign-up, sign-in, and a guest with chats of every kind. */

export type Refusal = { error: { code: string; message: string; field?: string } };
export const PASSWORD = 'correct horse battery';
let emails = 0;
export const newEmail = () => `person-${Date.now()}-${++emails}@example.test`;

export async function signUp(client: ApiClient, email: string, password = PASSWORD) {
  return await client.auth<{ user: { id: string } }>('sign-up/email', { email, password, name: 'Person' });
}

export async function signIn(client: ApiClient, email: string, password = PASSWORD) {
  return await client.auth<{ user: { id: string } }>('sign-in/email', { email, password });
}

export async function threadsOf(client: ApiClient): Promise<Thread[]> {
  const { status, body } = await client.json<ThreadPage>('GET', '/api/threads?limit=100');
  expect(status).toBe(200);
  return body.threads;
}

export async function accountOf(client: ApiClient): Promise<Account> {
  const { status, body } = await client.json<Account>('GET', '/api/account');
  expect(status).toBe(200);
  return body;
}

/**
 * A guest with two chats: one with a rated reply, a running reply and two queued items; one with
 * two versions and a share link.
 */
export async function guestWithChats(client: ApiClient) {
  const queuedThread = await client.createThread('Queued chat');
  await client.sendAndRead(queuedThread, 'first [[words:3]]');
  const reply = (await client.detail(queuedThread)).messages[1];
  const rated = await client.fetch('PUT', `/api/threads/${queuedThread}/messages/${reply?.id}/feedback`, {
    rating: 'up',
  });
  expect(rated.status).toBe(200);
  const running = await client.send(queuedThread, 'slow [[words:400]] [[delay:20]]');
  expect(running.status).toBe(200);
  await readUntilWords(running, 2);
  await client.queued(queuedThread, 'queued one');
  await client.queued(queuedThread, 'queued two');

  const versionThread = await client.createThread('Versioned chat');
  await client.sendAndRead(versionThread, 'original [[words:3]]');
  const [original] = (await client.detail(versionThread)).messages;
  const edit = await client.fetch('POST', `/api/threads/${versionThread}/messages/${original?.id}/versions`, {
    clientRequestId: crypto.randomUUID(),
    text: 'edited [[words:3]]',
  });
  expect(edit.status).toBe(200);
  await edit.text();
  const shared = await client.json<{ share: { token: string } }>(
    'POST',
    `/api/threads/${versionThread}/shares`,
    {},
  );
  expect(shared.status).toBe(201);
  const guestId = (await accountOf(client)).id;
  return { client, guestId, queuedThread, versionThread, shareToken: shared.body.share.token };
}
