import type { Thread, ToolMode } from '@chat/contracts';
import { refusalOf, type ThreadStore } from './useThreadStore';

/**
 * The chat's tool settings panel (T1): a change shows at once, the server stores it (a running
 * reply takes it at its next step, T2) and other tabs follow its `thread.changed`.
 */
export function useToolSettings(store: ThreadStore) {
  const { dispatch } = store;

  async function setMode(name: string, mode: ToolMode): Promise<void> {
    dispatch({ type: 'toolMode.requested', name, mode });
    try {
      await apiJson<Thread>(store.base, { method: 'PATCH', json: { tools: { [name]: mode } } });
      dispatch({ type: 'toolMode.answered', name });
    } catch (error) {
      dispatch({ type: 'toolMode.refused', name, error: refusalOf(error) });
    }
  }

  /** The panel opened: read the detail again, for the MCP servers as they are now (T3). */
  function panelOpened(): void {
    dispatch({ type: 'toolPanel.opened' });
  }

  return { setMode, panelOpened };
}
