import type { Thread } from '@chat/contracts';
import { refusalOf, type ThreadStore } from './useThreadStore';

/**
 * The chat's own model (M2) and instructions (M4): each change is a `PATCH` of the chat; the next
 * turn uses it (a running reply keeps what it started with). Other tabs follow `thread.changed`.
 */
export function useChatSettings(store: ThreadStore) {
  async function change(json: { model?: string; instructions?: string }): Promise<boolean> {
    try {
      const thread = await apiJson<Thread>(store.base, { method: 'PATCH', json });
      store.dispatch({ type: 'chatSettings.answered', thread });
      return true;
    } catch (error) {
      store.dispatch({ type: 'chatSettings.refused', error: refusalOf(error) });
      return false;
    }
  }

  return {
    setModel: (model: string) => change({ model }),
    setInstructions: (instructions: string) => change({ instructions }),
  };
}
