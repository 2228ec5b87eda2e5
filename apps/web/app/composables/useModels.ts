import type { ChatModel, ModelList } from '@chat/contracts';

/**
 * The models the server offers (M1), read once per page load and shared: the composer's picker,
 * Regenerate's menu and each reply's model label read it.
 */
export function useModels() {
  const models = useState<ChatModel[]>('chat-models', () => []);
  const loading = useState<Promise<void> | null>('chat-models-loading', () => null);
  const { whenSignedIn } = useSession();

  /** Reads the list once there is a session: a first visit asks nothing that would answer 401. */
  function load(): Promise<void> {
    loading.value ??= whenSignedIn()
      .then(() => apiJson<ModelList>('/api/models'))
      .then((list) => {
        models.value = list.models;
      })
      .catch(() => {
        // Without the list the picker hides; a reload asks again.
        loading.value = null;
      });
    return loading.value;
  }

  /** The label of a model id; the id itself when it is not (or no longer) offered. */
  function labelOf(id: string): string {
    return models.value.find((model) => model.id === id)?.label ?? id;
  }

  /** The model a chat runs with: its own choice, else the default (the first offered). */
  function chatModelOf(choice: string | undefined): string | undefined {
    return choice ?? models.value[0]?.id;
  }

  return { models: readonly(models), load, labelOf, chatModelOf };
}
