import type { AccountSettings } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { newEmail, signIn, signUp, threadsOf } from './support/accounts';
import type { ApiClient } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

/** A guest's own settings (M2, M4) when the guest signs up or in (chats move with it). */

let api: TestApi;
useTestApi((started) => {
  ({ api } = started);
});

async function settingsOf(client: ApiClient): Promise<AccountSettings> {
  const { status, body } = await client.json<AccountSettings>('GET', '/api/account/settings');
  expect(status).toBe(200);
  return body;
}

describe("a guest's settings on sign-up and sign-in", () => {
  it('move to a new account', async () => {
    const visitor = await api.client();
    await visitor.json('PATCH', '/api/account/settings', { instructions: 'Guest rule.' });
    expect((await signUp(visitor, newEmail())).status).toBe(200);
    expect((await settingsOf(visitor)).instructions).toBe('Guest rule.');
  });

  it("give way to an existing account's own, and the guest's chats still move", async () => {
    const owner = await api.client();
    const email = newEmail();
    expect((await signUp(owner, email)).status).toBe(200);
    await owner.json('PATCH', '/api/account/settings', { instructions: 'Account rule.' });

    const visitor = await api.client();
    await visitor.json('PATCH', '/api/account/settings', { instructions: 'Guest rule.' });
    const guestThread = await visitor.createThread('Guest chat');
    expect((await signIn(visitor, email)).status).toBe(200);
    expect((await threadsOf(visitor)).map((thread) => thread.id)).toContain(guestThread);
    expect((await settingsOf(visitor)).instructions).toBe('Account rule.');
  });
});
