import type { ServerSettings } from '@chat/contracts';

/**
 * What this server allows before anyone signs in (`GET /api/server-settings`), read once per page
 * load and shared: the sign-in and sign-up pages and the account menu offer sign-up only when it
 * is open. Until the answer comes (or when it cannot be had) sign-up counts as open: the server
 * refuses it anyway when it is not (`403 sign_up_disabled`), with words the form shows.
 */
export function useServerSettings() {
  const settings = useState<ServerSettings | null>('server-settings', () => null);
  const loading = useState<Promise<void> | null>('server-settings-loading', () => null);

  function load(): Promise<void> {
    loading.value ??= apiJson<ServerSettings>('/api/server-settings')
      .then((answer) => {
        settings.value = answer;
      })
      .catch(() => {
        loading.value = null;
      });
    return loading.value;
  }

  const signUpAllowed = computed(() => settings.value?.signUpAllowed !== false);

  return { settings: readonly(settings), signUpAllowed, load };
}
