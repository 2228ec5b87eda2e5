import type { AccountSettings } from '@chat/contracts';

/** The account's custom instructions (M4), as the account page edits them. */
export function useAccountInstructions() {
  const instructions = ref('');
  /** Editing waits for the stored text, so a read that lands late never replaces what was typed. */
  const loaded = ref(false);

  async function loadInstructions(): Promise<void> {
    instructions.value = (await apiJson<AccountSettings>('/api/account/settings')).instructions;
    loaded.value = true;
  }

  async function saveInstructions(): Promise<void> {
    const saved = await apiJson<AccountSettings>('/api/account/settings', {
      method: 'PATCH',
      json: { instructions: instructions.value },
    });
    instructions.value = saved.instructions;
  }

  return { instructions, loaded: readonly(loaded), loadInstructions, saveInstructions };
}
