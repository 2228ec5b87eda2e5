/** What the open page lets the keyboard shortcuts do (the layout owns the shortcuts). */
export interface ChatShortcutActions {
  focusComposer: () => void;
  /** Stops the reply being produced, if any. */
  stop?: () => void;
  /** The latest reply as Markdown, if there is one. */
  lastReplyText?: () => string | null;
}

/** Registers the open page's actions for the shortcuts for as long as the page is shown. */
export function useChatShortcuts(actions: ChatShortcutActions) {
  const current = useState<ChatShortcutActions | null>('chat-shortcut-actions', () => null);
  onMounted(() => {
    current.value = markRaw(actions);
  });
  onBeforeUnmount(() => {
    if (current.value === actions) current.value = null;
  });
}
