import type { AccountDeleted, AccountSession } from '@chat/contracts';

/** The account page's data: the signed-in devices, signing the others out, deleting the account. */
export function useAccountSettings() {
  const sessions = ref<AccountSession[]>([]);
  const loaded = ref(false);

  async function loadSessions(): Promise<void> {
    sessions.value = await apiJson<AccountSession[]>('/api/account/sessions');
    loaded.value = true;
  }

  async function signOutOthers(): Promise<void> {
    sessions.value = await apiJson<AccountSession[]>('/api/account/sessions/revoke-others', {
      method: 'POST',
      json: {},
    });
  }

  /** Answers once every chat, message and session of the account is gone. */
  async function deleteAccount(): Promise<AccountDeleted> {
    return await apiJson<AccountDeleted>('/api/account', { method: 'DELETE' });
  }

  return {
    sessions: readonly(sessions),
    loaded: readonly(loaded),
    loadSessions,
    signOutOthers,
    deleteAccount,
  };
}
