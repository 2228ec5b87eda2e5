import type { AgentWorkspace, WorkspaceList } from '@chat/contracts';
import type { InjectionKey, Ref } from 'vue';

/**
 * The workspaces this account may start agent chats on (A1), read once per page load and shared.
 * Empty (agent chats off, a guest where the deployment does not let guests have them, or the
 * list could not be read): nothing of agent chats shows. A sign-in or sign-out loads the app
 * afresh (`reloadAt`), so the list is never another account's.
 */
export function useWorkspaces() {
  const workspaces = useState<AgentWorkspace[]>('agent-workspaces', () => []);
  const loading = useState<Promise<void> | null>('agent-workspaces-loading', () => null);
  const { whenSignedIn } = useSession();

  /** Reads the list once there is a session (a first visit asks nothing that would answer 401). */
  function load(): Promise<void> {
    loading.value ??= whenSignedIn()
      .then(() => apiJson<WorkspaceList>('/api/workspaces'))
      .then((list) => {
        workspaces.value = list.workspaces;
      })
      .catch(() => {
        // Without the list the picker hides; a reload asks again.
        loading.value = null;
      });
    return loading.value;
  }

  return { workspaces: readonly(workspaces), load };
}

/**
 * Whether the open chat is an agent chat (A1), for what its replies say under them: the agent
 * wrote them, whatever model id they carry, and they cannot be regenerated with another model.
 */
export const agentChatKey: InjectionKey<Readonly<Ref<boolean>>> = Symbol('agent-chat');

/** The agent's name under its replies. */
export const AGENT_LABEL = 'Claude Code agent';
