/** The start page's chat, kept per account in this browser: `{ accountId, threadId }`. */
interface StartChatRecord {
  accountId: string;
  threadId: string;
}

const STORAGE_KEY = 'chat:start-chat';

function readRecord(): StartChatRecord | null {
  try {
    const record = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<StartChatRecord> | null;
    return typeof record?.accountId === 'string' && typeof record.threadId === 'string'
      ? { accountId: record.accountId, threadId: record.threadId }
      : null;
  } catch {
    return null;
  }
}

function writeRecord(record: StartChatRecord | null): void {
  try {
    if (record) localStorage.setItem(STORAGE_KEY, JSON.stringify(record));
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage off: the chat is reused for as long as the page lives.
  }
}

/**
 * The chat behind the start page. Images need a chat to be uploaded to, so the first image
 * attached on the start page makes one; until its first message is sent it is the start page's,
 * not a chat yet: the sidebar leaves it out, and the start page keeps using it (after a reload
 * too, with its images) instead of making another. Sending the first message hands it to its
 * own page (`release`). A first message without images makes its chat only when it is sent.
 */
export function useStartChat() {
  const { account, whenSignedIn } = useSession();
  const { create } = useThreads();
  const record = useState<StartChatRecord | null>('start-chat', () => readRecord());
  /** The unsent chat of the signed-in account, if the start page has one. */
  const threadId = computed(() =>
    record.value && record.value.accountId === account.value?.id ? record.value.threadId : null,
  );
  let making: Promise<string> | null = null;

  function set(next: StartChatRecord | null): void {
    record.value = next;
    writeRecord(next);
  }

  /** The start page's chat, made now if there is none (one at a time, however many images come). */
  async function ensure(): Promise<string> {
    const signedIn = await whenSignedIn();
    if (threadId.value) return threadId.value;
    making ??= create()
      .then((thread) => {
        set({ accountId: signedIn.id, threadId: thread.id });
        return thread.id;
      })
      .finally(() => {
        making = null;
      });
    return await making;
  }

  /** Its first message is on the way to its page: from now on it is a chat like any other. */
  function release(): void {
    set(null);
  }

  return { threadId, ensure, release };
}
