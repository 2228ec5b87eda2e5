import type { CompactAnswer } from '@chat/contracts';
import { refusalOf, type ThreadStore } from './useThreadStore';

/** Compact now (C3): the answer is the new meter and marker; a refusal shows in the banner. */
export function useContextCommands(store: ThreadStore) {
  const { dispatch } = store;

  async function compactNow(): Promise<void> {
    dispatch({ type: 'compactNow.requested' });
    try {
      const answer = await apiJson<CompactAnswer>(`${store.base}/compact`, { method: 'POST' });
      dispatch({ type: 'compactNow.answered', answer });
    } catch (error) {
      dispatch({ type: 'compactNow.refused', error: refusalOf(error) });
    }
  }

  return { compactNow };
}
