import {
  type ExportFormat,
  errorMessage,
  MAX_IMPORT_BYTES,
  type NewChatAnswer,
  refusalMessages,
} from '@chat/contracts';

/**
 * Taking a chat anywhere (P1-P4): the export downloads of a chat, and the three ways to a new chat
 * of one's own: import a JSON export (the sidebar), "New chat from here" on a message, "Continue
 * this chat" on a shared snapshot. Each new chat opens once the server has made it (whole, or not
 * at all), and the sidebar lists it; a refusal is shown in a toast with the server's words (an
 * import's names the first problem in the file).
 */
export function useChatCopies() {
  const { refresh } = useThreads();
  const toast = useToast();
  /** What is being made now (one at a time): the buttons show it and wait. */
  const making = useState<'import' | 'fork' | 'continue' | null>('chat-copies-making', () => null);

  /** Where a chat's export downloads from (the API answers it as an attachment). */
  function exportUrl(threadId: string, format: ExportFormat): string {
    return `/api/threads/${encodeURIComponent(threadId)}/export?format=${format}`;
  }

  /** Saves a chat's export as a file, without leaving the page. */
  function download(threadId: string, format: ExportFormat): void {
    const link = document.createElement('a');
    link.href = exportUrl(threadId, format);
    link.download = '';
    link.rel = 'noopener';
    document.body.append(link);
    link.click();
    link.remove();
  }

  async function make(
    kind: 'import' | 'fork' | 'continue',
    failureTitle: string,
    request: () => Promise<NewChatAnswer>,
  ): Promise<boolean> {
    if (making.value) return false;
    making.value = kind;
    try {
      const { thread } = await request();
      await refresh();
      await navigateTo(`/chat/${thread.id}`);
      return true;
    } catch (error) {
      toast.add({
        title: failureTitle,
        description: ApiRequestError.fromUnknown(error).message,
        icon: 'i-lucide-circle-alert',
        color: 'error',
      });
      return false;
    } finally {
      making.value = null;
    }
  }

  /** P2: a JSON export (a file the person picked) as a new chat. */
  function importFile(file: File): Promise<boolean> {
    return make('import', 'Could not import the chat', async () => {
      // Known to be refused: say so without sending it.
      if (file.size > MAX_IMPORT_BYTES) throw new ApiRequestError(refusalMessages.too_large.importBody, 413);
      return await apiJson<NewChatAnswer>('/api/imports', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: file,
      });
    });
  }

  /** P3: the shown version up to `messageId` as a new chat. */
  function fork(threadId: string, messageId: string): Promise<boolean> {
    return make('fork', 'Could not start a new chat from here', () =>
      apiJson<NewChatAnswer>(
        `/api/threads/${encodeURIComponent(threadId)}/messages/${encodeURIComponent(messageId)}/fork`,
        { method: 'POST', json: {} },
      ),
    );
  }

  /** P4: a shared snapshot as a new chat of the caller's (a guest is made first when there is no one). */
  async function continueShare(token: string): Promise<boolean> {
    const session = useSession();
    await session.ensureSession({ startGuest: true });
    if (!session.account.value && !session.guestsAllowed.value) {
      // No guests on this server: sign in, then come back here.
      await navigateTo({ path: '/sign-in', query: { redirect: `/share/${token}` } });
      return false;
    }
    return await make('continue', 'Could not continue this chat', async () => {
      if (!session.account.value)
        throw new ApiRequestError(session.error.value ?? errorMessage('unavailable'), 0);
      return await apiJson<NewChatAnswer>(`/api/shares/${encodeURIComponent(token)}/continue`, {
        method: 'POST',
        json: {},
      });
    });
  }

  return { making: readonly(making), exportUrl, download, importFile, fork, continueShare };
}
