import type { Account, AccountDeleted, AccountSession } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { sweepIdleGuests } from '../src/accounts/guestSweep';
import {
  accountOf,
  guestWithChats,
  newEmail,
  PASSWORD,
  type Refusal,
  signIn,
  signUp,
  threadsOf,
} from './support/accounts';
import {
  APP_HEADERS,
  ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { startTestApi, type TestApi, useTestApi } from './support/testApi';
import { rowsMentioning } from './support/userRows';

let api: TestApi;
useTestApi((started) => {
  ({ api } = started);
});

async function guest(): Promise<ApiClient> {
  return await api.client();
}

describe('signing up keeps the guest chats', () => {
  it('moves every chat, its queue and versions to the new account, and they keep working', async () => {
    const { client, guestId, queuedThread, versionThread, shareToken } = await guestWithChats(await guest());
    const email = newEmail();
    const signedUp = await signUp(client, email);
    expect(signedUp.status).toBe(200);
    const account = await accountOf(client);
    expect(account).toMatchObject({ email, isGuest: false });
    expect(account.id).not.toBe(guestId);

    const threads = await threadsOf(client);
    expect(threads.map((thread) => thread.id).sort()).toEqual([queuedThread, versionThread].sort());
    // The reply that was streaming goes on to its end; the queued items stayed queued.
    const queued = await waitFor(
      () => client.detail(queuedThread),
      (detail) => detail.turnQueue.activeTurn === null,
      20_000,
    );
    expect(queued.turnQueue.items.map((item) => item.text)).toEqual(['queued one', 'queued two']);
    const versioned = await client.detail(versionThread);
    expect(versioned.messages[0]?.metadata.version).toMatchObject({ index: 2, count: 2 });
    expect(queued.messages[1]?.metadata.feedback).toMatchObject({ rating: 'up' });
    const shares = await client.json<{ shares: Array<{ token: string }> }>(
      'GET',
      `/api/threads/${versionThread}/shares`,
    );
    expect(shares.body.shares.map((share) => share.token)).toEqual([shareToken]);

    // The moved chats run turns under the account (Mastra refuses a thread of another resource).
    const claim = await client.fetch('POST', `/api/threads/${queuedThread}/queue/claim`, {});
    expect(claim.status).toBe(200);
    await claim.text();
    await client.sendAndRead(versionThread, 'after sign-up [[words:2]]');

    // Nothing of the guest is left anywhere: its user row, memory resource and rows all moved.
    await waitFor(
      () => rowsMentioning(api.runtime.database.sql, [guestId]),
      (rows) => rows.length === 0,
    );
  });

  it('shows the same chats when the account signs in from a second client', async () => {
    const { client, queuedThread, versionThread } = await guestWithChats(await guest());
    const email = newEmail();
    expect((await signUp(client, email)).status).toBe(200);
    const second = ApiClient.anonymousVisitor(api.baseUrl);
    expect((await signIn(second, email)).status).toBe(200);
    const ids = (await threadsOf(second)).map((thread) => thread.id).sort();
    expect(ids).toEqual([queuedThread, versionThread].sort());
    expect((await second.detail(versionThread)).messages.length).toBeGreaterThan(0);
  });

  it('adds a guest’s chats to an existing account on sign-in, once, however often the link runs', async () => {
    const owner = await guest();
    const email = newEmail();
    expect((await signUp(owner, email)).status).toBe(200);
    const ownThread = await owner.createThread('Own chat');

    const visitor = await guest();
    const guestThread = await visitor.createThread('Guest chat');
    await visitor.sendAndRead(guestThread, 'hello [[words:2]]');
    const guestId = (await accountOf(visitor)).id;
    const guestCookie = visitor.cookieHeader;
    expect((await signIn(visitor, email)).status).toBe(200);
    const accountId = (await accountOf(visitor)).id;

    // The same link again (a retried or concurrent sign-in) moves nothing more.
    await api.runtime.services.accounts.linkGuest({ guestId, userId: accountId });
    // The guest's old cookie is a session no more: signing in with it again links nothing.
    const stale = owner.withCookie(guestCookie);
    expect((await stale.json('GET', '/api/threads')).status).toBe(401);
    expect((await signIn(stale, email)).status).toBe(200);

    const ids = (await threadsOf(owner)).map((thread) => thread.id).sort();
    expect(ids).toEqual([ownThread, guestThread].sort());
    const detail = await owner.detail(guestThread);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });
});

describe('signing up while a reply streams', () => {
  it('does not cut the reply off: it streams to its end, is kept whole under the account, and the guest id is gone', async () => {
    const client = await guest();
    const threadId = await client.createThread('Streaming chat');
    const guestId = (await accountOf(client)).id;
    const running = await client.send(threadId, 'keep going [[words:60]] [[delay:25]]');
    expect(running.status).toBe(200);
    const chunks = iterateChunks(running);
    let streamed = '';
    while (streamed.trim().split(/\s+/).length < 3) {
      const next = await chunks.next();
      if (next.done) throw new Error('the reply ended before the sign-up');
      if (next.value.type === 'text-delta') streamed += String(next.value.delta);
    }

    expect((await signUp(client, newEmail())).status).toBe(200);
    // The same connection goes on to the reply's end.
    for await (const chunk of chunks) if (chunk.type === 'text-delta') streamed += String(chunk.delta);
    // [[words:60]]: the whole reply, not the few words before the sign-up.
    expect(streamed.trim().split(/\s+/)).toHaveLength(60);

    const settled = await waitFor(
      () => client.detail(threadId),
      (detail) => detail.turnQueue.activeTurn === null,
    );
    const reply = settled.messages.at(-1);
    expect(reply?.metadata.interrupted).toBeUndefined();
    expect(textOfMessage(reply)).toBe(streamed);
    // What the model call saved under the guest's memory resource became the account's too.
    await waitFor(
      () => rowsMentioning(api.runtime.database.sql, [guestId]),
      (rows) => rows.length === 0,
    );
    // The chat goes on under the account (Mastra refuses a thread of another resource).
    const next = await client.sendAndRead(threadId, 'and now [[words:12]]');
    expect(textOfChunks(next.chunks)).toContain('You said: "and now"');
  });

  it('keeps a reply that waits for an approval waiting; it is approved and finishes under the account', async () => {
    const client = await guest();
    const threadId = await client.createThread('Approval chat');
    await client.sendAndRead(threadId, 'buy milk [[tool:save_note]]');
    const waiting = await client.detail(threadId);
    expect(waiting.turnQueue.activeTurn?.status).toBe('awaiting_approval');
    const [request] = waiting.hitl;

    expect((await signUp(client, newEmail())).status).toBe(200);
    const moved = await client.detail(threadId);
    expect(moved.hitl.map((entry) => entry.status)).toEqual(['pending']);

    const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    expect(textOfChunks(await readChunks(approved))).toContain('save_note');
    const done = await client.detail(threadId);
    expect(done.turnQueue.activeTurn).toBeNull();
    expect(done.notes.map((note) => note.text)).toEqual(['buy milk']);
  });
});

describe('sign-up and sign-in refusals', () => {
  it('names the field of a malformed email or a short password, and changes nothing', async () => {
    const client = await guest();
    const before = await accountOf(client);
    for (const [body, field] of [
      [{ email: 'not-an-email', password: PASSWORD, name: 'x' }, 'email'],
      [{ email: newEmail(), password: 'short', name: 'x' }, 'password'],
      [{ password: PASSWORD, name: 'x' }, 'email'],
    ] as const) {
      const { status, body: refusal } = await client.auth<Refusal>('sign-up/email', body);
      expect(status).toBe(400);
      expect(refusal.error).toMatchObject({ code: 'bad_request', field });
    }
    const signInRefusal = await client.auth<Refusal>('sign-in/email', { email: 'nope', password: 'x' });
    expect(signInRefusal.status).toBe(400);
    expect(signInRefusal.body.error.field).toBe('email');
    expect(await accountOf(client)).toEqual(before);
  });

  it('gives a wrong password and an unknown email the same 401', async () => {
    const email = newEmail();
    expect((await signUp(await guest(), email)).status).toBe(200);
    const wrongPassword = await signIn(ApiClient.anonymousVisitor(api.baseUrl), email, 'wrong password!');
    const unknownEmail = await signIn(ApiClient.anonymousVisitor(api.baseUrl), newEmail());
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknownEmail.body);
    expect((wrongPassword.body as unknown as Refusal).error.code).toBe('invalid_credentials');
  });

  it('refuses a taken email with 409 email_taken, and the guest keeps its chats', async () => {
    const email = newEmail();
    expect((await signUp(await guest(), email)).status).toBe(200);
    const client = await guest();
    const threadId = await client.createThread('Mine');
    const { status, body } = await client.auth<Refusal>('sign-up/email', {
      email,
      password: PASSWORD,
      name: 'x',
    });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({ code: 'email_taken', field: 'email' });
    expect((await accountOf(client)).isGuest).toBe(true);
    expect((await threadsOf(client)).map((thread) => thread.id)).toEqual([threadId]);
  });
});

describe('sessions', () => {
  it('signing out ends the session on the server', async () => {
    const client = await guest();
    const email = newEmail();
    expect((await signUp(client, email)).status).toBe(200);
    const copy = client.withCookie(client.cookieHeader);
    expect((await client.auth('sign-out')).status).toBe(200);
    const after = await copy.json<Refusal>('GET', '/api/threads');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
  });

  it('lists the devices and signs out every other one', async () => {
    const email = newEmail();
    const first = await guest();
    expect((await signUp(first, email)).status).toBe(200);
    const second = ApiClient.anonymousVisitor(api.baseUrl);
    expect((await signIn(second, email)).status).toBe(200);

    const listed = await first.json<AccountSession[]>('GET', '/api/account/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(2);
    expect(listed.body.filter((session) => session.current)).toHaveLength(1);
    expect(listed.body[0]?.current).toBe(true);
    expect(JSON.stringify(listed.body)).not.toMatch(/token/i);

    const revoked = await first.json<AccountSession[]>('POST', '/api/account/sessions/revoke-others', {});
    expect(revoked.status).toBe(200);
    expect(revoked.body.map((session) => session.current)).toEqual([true]);
    expect((await second.json('GET', '/api/threads')).status).toBe(401);
    expect((await first.json('GET', '/api/threads')).status).toBe(200);
  });
});

describe('deleting the account', () => {
  it('removes every row of the user in every table, and nothing of anyone else', async () => {
    const { client, queuedThread, versionThread } = await guestWithChats(await guest());
    const email = newEmail();
    expect((await signUp(client, email)).status).toBe(200);
    const second = ApiClient.anonymousVisitor(api.baseUrl);
    expect((await signIn(second, email)).status).toBe(200);
    const userId = (await accountOf(client)).id;
    // A reply is running while the account is deleted.
    const running = await client.send(versionThread, 'still talking [[words:400]] [[delay:20]]');
    expect(running.status).toBe(200);
    await readUntilWords(running, 2);

    // A third chat waits for the person to approve a tool call.
    const approvalThread = await client.createThread('Waiting for approval');
    await client.sendAndRead(approvalThread, 'buy milk [[tool:save_note]]');
    expect((await client.detail(approvalThread)).turnQueue.activeTurn?.status).toBe('awaiting_approval');

    const bystander = await guest();
    const bystanderThread = await bystander.createThread('Not theirs');
    await bystander.sendAndRead(bystanderThread, 'hello [[words:2]]');

    const { sql } = api.runtime.database;
    const details = await Promise.all(
      [queuedThread, versionThread, approvalThread].map((threadId) => client.detail(threadId)),
    );
    const branchIds = details.flatMap((detail) => [
      detail.thread.activeBranchId,
      ...detail.messages.flatMap((message) => message.metadata.version?.branchIds ?? []),
    ]);
    const needles = [userId, email, queuedThread, versionThread, approvalThread, ...branchIds];
    const before = new Set((await rowsMentioning(sql, needles)).map((hit) => hit.table));
    for (const table of [
      'public.user',
      'public.session',
      'public.account',
      'public.threads',
      'public.branches',
      'public.chat_turn_requests',
      'public.shares',
      'public.message_feedback',
      'public.hitl_requests',
      'mastra.mastra_threads',
      'mastra.mastra_messages',
    ]) {
      expect(before, table).toContain(table);
    }

    const deleted = await client.json<AccountDeleted>('DELETE', '/api/account');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true, threads: 3 });
    expect(deleted.headers.getSetCookie().join('\n')).toMatch(/session_token=;|max-age=0/i);

    expect(await rowsMentioning(sql, needles)).toEqual([]);
    expect((await client.json('GET', '/api/threads')).status).toBe(401);
    expect((await second.json('GET', '/api/threads')).status).toBe(401);
    expect((await signIn(ApiClient.anonymousVisitor(api.baseUrl), email)).status).toBe(401);
    // The runner's stopped reply wrote nothing back afterwards.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await rowsMentioning(sql, needles)).toEqual([]);

    const bystanderDetail = await waitFor(
      () => bystander.detail(bystanderThread),
      (detail) => detail.messages.length === 2,
    );
    expect(bystanderDetail.thread.title).toBe('Not theirs');
  });
});

describe('AUTH_ALLOW_GUESTS=false', () => {
  it('refuses guest sign-in and guest sessions; sign-up still keeps a leftover guest’s chats', async () => {
    // A guest from before the switch, on the same database.
    const leftover = await guest();
    const threadId = await leftover.createThread('From before');
    const strict = await startTestApi(api.runtime.database.url, { AUTH_ALLOW_GUESTS: 'false' });
    try {
      const visitor = ApiClient.anonymousVisitor(strict.baseUrl);
      const refused = await visitor.auth<Refusal>('sign-in/anonymous');
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('guests_disabled');
      expect(refused.headers.getSetCookie()).toEqual([]);

      const stillGuest = leftover.via(strict.baseUrl);
      expect((await stillGuest.json('GET', '/api/threads')).status).toBe(401);
      expect((await stillGuest.json('GET', '/api/account')).status).toBe(401);
      expect((await signUp(stillGuest, newEmail())).status).toBe(200);
      expect((await threadsOf(stillGuest)).map((thread) => thread.id)).toEqual([threadId]);
    } finally {
      await strict.close();
    }
  });
});

describe('guests switched off means off', () => {
  it('answers an old guest cookie as signed out on every route, get-session and update-user included, and its public share stops answering at once', async () => {
    const leftover = await guest();
    const leftoverId = (await accountOf(leftover)).id;
    const threadId = await leftover.createThread('Shared before the switch');
    await leftover.sendAndRead(threadId, 'shared words [[words:3]]');
    const made = await leftover.json<{ share: { token: string } }>(
      'POST',
      `/api/threads/${threadId}/shares`,
      {},
    );
    expect(made.status).toBe(201);
    const token = made.body.share.token;
    expect((await fetch(`${api.baseUrl}/api/shares/${token}`)).status).toBe(200);

    const strict = await startTestApi(api.runtime.database.url, { AUTH_ALLOW_GUESTS: 'false' });
    try {
      const stillGuest = leftover.via(strict.baseUrl);
      // get-session answers as to no session at all: `null`.
      const session = await stillGuest.fetch('GET', '/api/auth/get-session');
      expect(session.status).toBe(200);
      expect(await session.json()).toBeNull();
      // Acting as the session is refused as signed out, and changes nothing.
      const renamed = await stillGuest.json<Refusal>('POST', '/api/auth/update-user', {
        name: 'Renamed after the switch',
        image: 'https://example.test/face.png',
      });
      expect(renamed.status).toBe(401);
      expect(renamed.body.error.code).toBe('unauthorized');
      const password = await stillGuest.json<Refusal>('POST', '/api/auth/change-password', {
        currentPassword: PASSWORD,
        newPassword: `${PASSWORD}-new`,
      });
      expect(password.status).toBe(401);
      const { sql } = api.runtime.database;
      const [row] = await sql<{ name: string; image: string | null }[]>`
        select name, image from "user" where id = ${leftoverId}`;
      expect(row?.name).not.toBe('Renamed after the switch');
      expect(row?.image).toBeNull();
      for (const [method, path] of [
        ['GET', '/api/threads'],
        ['GET', `/api/threads/${threadId}`],
        ['GET', '/api/account'],
        ['GET', `/api/threads/${threadId}/shares`],
        ['DELETE', `/api/shares/${token}`],
      ] as const)
        expect([method, path, (await stillGuest.fetch(method, path)).status]).toEqual([method, path, 401]);

      // Its public share answers nothing at once, to anyone, and cannot be continued.
      const shared = await fetch(`${strict.baseUrl}/api/shares/${token}`);
      expect(shared.status).toBe(404);
      expect(((await shared.json()) as Refusal).error.code).toBe('not_found');
      const member = ApiClient.anonymousVisitor(strict.baseUrl);
      expect((await signUp(member, newEmail())).status).toBe(200);
      expect((await member.fetch('POST', `/api/shares/${token}/continue`)).status).toBe(404);
      // An account's share still answers.
      const memberThread = await member.createThread('An account’s');
      const memberShare = await member.json<{ share: { token: string } }>(
        'POST',
        `/api/threads/${memberThread}/shares`,
        {},
      );
      expect((await fetch(`${strict.baseUrl}/api/shares/${memberShare.body.share.token}`)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('AUTH_ALLOW_SIGNUP', () => {
  it('false closes sign-up with 403 sign_up_disabled and makes no account; existing accounts still sign in', async () => {
    const email = newEmail();
    expect((await signUp(ApiClient.anonymousVisitor(api.baseUrl), email)).status).toBe(200);
    const closed = await startTestApi(api.runtime.database.url, { AUTH_ALLOW_SIGNUP: 'false' });
    try {
      const settings = await fetch(`${closed.baseUrl}/api/server-settings`);
      expect(settings.status).toBe(200);
      expect(await settings.json()).toEqual({ guestsAllowed: true, signUpAllowed: false });

      const stranger = newEmail();
      const refused = await signUp(ApiClient.anonymousVisitor(closed.baseUrl), stranger);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('content-type')).toContain('application/json');
      expect((refused.body as unknown as Refusal).error).toEqual({
        code: 'sign_up_disabled',
        message: 'This server does not take new accounts. Sign in with an existing one.',
      });
      expect(refused.headers.getSetCookie()).toEqual([]);
      const { sql } = api.runtime.database;
      expect(await sql`select id from "user" where email = ${stranger}`).toEqual([]);
      // A guest cannot turn itself into an account either; it stays a guest with its chats.
      const visitor = await guest();
      expect((await signUp(visitor.via(closed.baseUrl), newEmail())).status).toBe(403);

      const member = ApiClient.anonymousVisitor(closed.baseUrl);
      expect((await signIn(member, email)).status).toBe(200);
      expect((await member.json<Account>('GET', '/api/account')).body.email).toBe(email);
    } finally {
      await closed.close();
    }
  });

  it('open by default: the server settings say so and sign-up makes an account', async () => {
    const settings = await fetch(`${api.baseUrl}/api/server-settings`);
    expect(await settings.json()).toEqual({ guestsAllowed: true, signUpAllowed: true });
    expect((await signUp(ApiClient.anonymousVisitor(api.baseUrl), newEmail())).status).toBe(200);
  });
});

describe('guests switched off: leftover guest data', () => {
  it('is removed, share links included, once its guest has not visited for the grace period; accounts and recent guests stay', async () => {
    const idle = await guest();
    const idleId = (await accountOf(idle)).id;
    const idleThread = await idle.createThread('Left behind');
    await idle.sendAndRead(idleThread, 'an old chat [[words:3]]');
    const share = await idle.json<{ share: { token: string } }>(
      'POST',
      `/api/threads/${idleThread}/shares`,
      {},
    );
    expect(share.status).toBe(201);
    const recent = await guest();
    const recentThread = await recent.createThread('Still visiting');
    const member = ApiClient.anonymousVisitor(api.baseUrl);
    expect((await signUp(member, newEmail())).status).toBe(200);
    const memberThread = await member.createThread('An account');
    // The idle guest's last visit (its session's refresh, its user row) was 40 days ago.
    const { sql } = api.runtime.database;
    await sql`update "user" set updated_at = now() - interval '40 days', created_at = now() - interval '40 days' where id = ${idleId}`;
    await sql`update session set updated_at = now() - interval '40 days' where user_id = ${idleId}`;

    const strict = await startTestApi(api.runtime.database.url, {
      AUTH_ALLOW_GUESTS: 'false',
      GUEST_GRACE_DAYS: '30',
    });
    try {
      const removed = await sweepIdleGuests(strict.runtime.services.accounts, api.runtime.database.db, {
        idleMs: 30 * 86_400_000,
      });
      expect(removed).toBeGreaterThanOrEqual(1);
      expect(await rowsMentioning(sql, [idleId, idleThread])).toEqual([]);
      expect((await member.json('GET', `/api/shares/${share.body.share.token}`)).status).toBe(404);
      expect((await threadsOf(recent)).map((thread) => thread.id)).toContain(recentThread);
      expect((await threadsOf(member)).map((thread) => thread.id)).toContain(memberThread);
    } finally {
      await strict.close();
    }
  });
});

describe('sign-in limits', () => {
  const limits = {
    RATE_LIMIT_SIGN_INS_PER_IP: '100',
    RATE_LIMIT_FAILED_SIGN_INS: '3',
    RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: '5',
  };
  /** A sign-in from `address` (the API trusts loopback proxies' X-Forwarded-For). */
  const attempt = (baseUrl: string, email: string, password: string, address: string) =>
    fetch(`${baseUrl}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { ...APP_HEADERS, 'x-forwarded-for': address },
      body: JSON.stringify({ email, password }),
    });

  it('limits failed sign-ins per email and address, and a flood from many addresses never locks the owner out of a new one', async () => {
    const limited = await startTestApi(api.runtime.database.url, limits);
    try {
      const email = newEmail();
      expect((await signUp(ApiClient.anonymousVisitor(limited.baseUrl), email)).status).toBe(200);
      const wrong = (address: string) => attempt(limited.baseUrl, email, 'wrong password!', address);
      // One address: three failures, then refused (429 with Retry-After), even with the right password.
      const one = [];
      for (let n = 0; n < 4; n++) one.push((await wrong('10.0.0.1')).status);
      expect(one).toEqual([401, 401, 401, 429]);
      const refused = await attempt(limited.baseUrl, email, PASSWORD, '10.0.0.1');
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as Refusal).error.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      // Failures from more addresses pass the email's ceiling (5): past it, an address that
      // failed once on this email is refused at once ...
      expect((await wrong('10.0.0.2')).status).toBe(401);
      expect((await wrong('10.0.0.2')).status).toBe(401);
      expect((await wrong('10.0.0.2')).status).toBe(429);
      // ... and each new address gets one try.
      for (let n = 3; n < 8; n++) {
        expect((await wrong(`10.0.0.${n}`)).status).toBe(401);
        expect((await wrong(`10.0.0.${n}`)).status).toBe(429);
      }
      // The owner, from an address of their own, signs in.
      expect((await attempt(limited.baseUrl, email, PASSWORD, '10.0.0.99')).status).toBe(200);
      // Another email is not held back by any of it.
      expect((await attempt(limited.baseUrl, newEmail(), 'wrong password!', '10.0.0.1')).status).toBe(401);
    } finally {
      await limited.close();
    }
  });

  it('limits failed password changes per account, and changes the password with the right one', async () => {
    const limited = await startTestApi(api.runtime.database.url, limits);
    try {
      const client = ApiClient.anonymousVisitor(limited.baseUrl);
      const email = newEmail();
      expect((await signUp(client, email)).status).toBe(200);
      const change = (currentPassword: string) =>
        client.auth('change-password', { currentPassword, newPassword: 'a brand new password' });
      const statuses = [];
      for (let n = 0; n < 3; n++) statuses.push((await change('not the password')).status);
      expect(statuses).toEqual([400, 400, 400]);
      expect((await change(PASSWORD)).status).toBe(429);

      const other = ApiClient.anonymousVisitor(limited.baseUrl);
      const otherEmail = newEmail();
      expect((await signUp(other, otherEmail)).status).toBe(200);
      const changed = await other.auth('change-password', {
        currentPassword: PASSWORD,
        newPassword: 'a brand new password',
      });
      expect(changed.status).toBe(200);
      expect(
        (await signIn(ApiClient.anonymousVisitor(limited.baseUrl), otherEmail, 'a brand new password'))
          .status,
      ).toBe(200);
      expect((await signIn(ApiClient.anonymousVisitor(limited.baseUrl), otherEmail)).status).toBe(401);
    } finally {
      await limited.close();
    }
  });
});

describe('profile fields', () => {
  it('bounds the name and takes only an http(s) image URL (or none), at sign-up and on update, changing nothing otherwise', async () => {
    const client = ApiClient.anonymousVisitor(api.baseUrl);
    const email = newEmail();
    const refusedSignUps = [
      { name: 'n'.repeat(101) },
      { name: 'Person', image: 'javascript:alert(1)' },
      { name: 'Person', image: 'data:image/png;base64,AAAA' },
      { name: 'Person', image: `https://example.test/${'a'.repeat(2100)}` },
    ];
    for (const extra of refusedSignUps) {
      const answer = await client.auth<Refusal>('sign-up/email', { email, password: PASSWORD, ...extra });
      expect(answer.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
      expect(answer.body.error.code).toBe('bad_request');
      expect(['name', 'image']).toContain(answer.body.error.field);
    }
    const signedUp = await client.auth('sign-up/email', {
      email,
      password: PASSWORD,
      name: 'Person',
      image: 'https://example.test/me.png',
    });
    expect(signedUp.status).toBe(200);
    for (const body of [
      { name: 'x'.repeat(5000) },
      { image: 'javascript:alert(1)' },
      { image: 'ftp://example.test/a' },
    ]) {
      const answer = await client.auth<Refusal>('update-user', body);
      expect(answer.status, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    const session = await client.json<{ user: { name: string; image: string | null } }>(
      'GET',
      '/api/auth/get-session',
    );
    expect(session.body.user).toMatchObject({ name: 'Person', image: 'https://example.test/me.png' });
    expect((await client.auth('update-user', { name: 'Renamed', image: null })).status).toBe(200);
    const after = await client.json<{ user: { name: string; image: string | null } }>(
      'GET',
      '/api/auth/get-session',
    );
    expect(after.body.user).toMatchObject({ name: 'Renamed', image: null });
  });
});

describe('the auth routes', () => {
  it('serve only what the app uses: anything else of better-auth is 404', async () => {
    const client = await guest();
    for (const path of [
      'delete-user',
      'list-accounts',
      'revoke-sessions',
      'change-email',
      'request-password-reset',
      'set-password',
    ]) {
      const answer = await client.auth<Refusal>(path, {});
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code, path).toBe('not_found');
    }
    expect((await client.fetch('GET', '/api/auth/list-sessions')).status).toBe(404);
    expect((await client.fetch('GET', '/api/auth/get-session')).status).toBe(200);
  });
});
