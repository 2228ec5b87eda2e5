import { useLocalStorage } from '@vueuse/core';

/**
 * What the person is typing in one chat's composer (or the start page's, `key` = `new`), kept
 * in the browser's storage until it is sent, so a reload or a crash loses nothing typed.
 */
export function useDraft(key: string) {
  // Storage off (private mode, a policy) or full: the composer still holds the text for as long
  // as the page lives, so there is nothing to report. Another tab's typing stays in that tab.
  const stored = useLocalStorage<string | null>(`chat:draft:${key}`, null, {
    listenToStorageChanges: false,
    onError: () => {},
  });
  // An empty draft is no draft: its key leaves the storage (null removes it).
  return computed<string>({
    get: () => stored.value ?? '',
    set: (value) => {
      stored.value = value || null;
    },
  });
}

/**
 * A send that never reached the server keeps its `clientRequestId`: sending the same text again
 * reuses it, so a retry of a request the server did get never makes a second turn (Q1).
 */
export function useUnsentSend() {
  let unsent: { text: string; clientRequestId: string } | null = null;

  /** The id for sending `text`: the unsent one's when it is the same text, else a new one. */
  function idFor(text: string): string {
    if (unsent?.text === text) return unsent.clientRequestId;
    return crypto.randomUUID();
  }

  function remember(text: string, clientRequestId: string): void {
    unsent = { text, clientRequestId };
  }

  function forget(): void {
    unsent = null;
  }

  /** The unsent send, if any: its text and id. */
  function current(): { text: string; clientRequestId: string } | null {
    return unsent;
  }

  return { idFor, remember, forget, current };
}
