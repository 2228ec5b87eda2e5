import { useEventListener } from '@vueuse/core';
import type { ChatShortcutActions } from './useChatShortcuts';

/** The keyboard shortcuts, as the help dialog lists them. */
export const shortcutList = [
  { keys: ['Ctrl', 'Shift', 'O'], does: 'New chat' },
  { keys: ['Ctrl', 'K'], does: 'Search chats' },
  { keys: ['Shift', 'Esc'], does: 'Focus the message box' },
  { keys: ['Esc'], does: 'Stop the reply (in the message box, or outside a text field)' },
  { keys: ['Ctrl', 'Shift', 'C'], does: 'Copy the last reply' },
  { keys: ['Alt', '↑'], does: 'Move the focused queued message up' },
  { keys: ['Alt', '↓'], does: 'Move the focused queued message down' },
  { keys: ['?'], does: 'Show these shortcuts (also Ctrl+/)' },
] as const;

/** Where typing goes: shortcuts without a modifier leave these alone. */
function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * The app's keyboard shortcuts, owned by the layout (Ctrl means Cmd on a Mac). The open page
 * lends its actions through `useChatShortcuts`; search and help are dialogs of the layout.
 * Not Nuxt UI's `defineShortcuts`: it cancels every matching key before its handler runs and
 * tells text fields apart only by name, where Esc here must stay the IME's while composing and
 * a dialog's or an editor's, and stop the reply only in the message box or outside a text field.
 */
export function useShortcuts(options: { openSearch: () => void; openHelp: () => void }) {
  const actions = useState<ChatShortcutActions | null>('chat-shortcut-actions', () => null);
  const toast = useToast();

  async function copyLastReply(): Promise<void> {
    const text = actions.value?.lastReplyText?.();
    if (!text) return;
    const copied = await copyText(text);
    toast.add({
      title: copied ? 'Copied the last reply' : 'Could not copy',
      icon: copied ? 'i-lucide-copy-check' : 'i-lucide-circle-alert',
      color: copied ? 'success' : 'error',
      duration: 2000,
    });
  }

  function onKeydown(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing) return;
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    // A dialog (search, help, a confirmation) or an open menu has the keyboard to itself: Esc
    // closes it, and must not also stop the reply.
    const inDialog =
      event.target instanceof Element && event.target.closest('[role="dialog"], [role="menu"]') !== null;

    if (mod && event.shiftKey && key === 'o') {
      event.preventDefault();
      void Promise.resolve(navigateTo('/')).then(() => nextTick(() => actions.value?.focusComposer()));
    } else if (mod && !event.shiftKey && key === 'k') {
      event.preventDefault();
      options.openSearch();
    } else if (mod && event.shiftKey && key === 'c') {
      event.preventDefault();
      void copyLastReply();
    } else if ((mod && key === '/') || (key === '?' && !mod && !isEditable(event.target))) {
      event.preventDefault();
      options.openHelp();
    } else if (inDialog) {
      return;
    } else if (key === 'escape' && event.shiftKey && !mod) {
      event.preventDefault();
      actions.value?.focusComposer();
    } else if (
      key === 'escape' &&
      !event.shiftKey &&
      !mod &&
      (!isEditable(event.target) || inMessageBox(event.target))
    ) {
      // The message box too: it has the keyboard after every send, while the reply streams.
      actions.value?.stop?.();
    }
  }

  useEventListener(window, 'keydown', onKeydown);
}

/** The composer's message box (other text fields keep Esc for themselves: an editor cancels). */
function inMessageBox(target: EventTarget | null): boolean {
  return target instanceof Element && target.closest('[data-message-box]') !== null;
}
