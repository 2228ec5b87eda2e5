import type { AwayNotification } from '~/threadPage/state';

/**
 * Browser notifications for a chat that works while its tab is hidden (Q15). Permission is asked
 * for only when the person turns "Keep going when I leave" on, never on page load.
 */

/** Whether this browser can show notifications at all. */
export function notificationsSupported(): boolean {
  return typeof window !== 'undefined' && 'Notification' in window;
}

/** Asks for permission once (the person's click is the reason); whether notifications may show. */
export async function askToNotify(): Promise<boolean> {
  if (!notificationsSupported()) return false;
  if (Notification.permission !== 'default') return Notification.permission === 'granted';
  return (await Notification.requestPermission().catch(() => 'denied')) === 'granted';
}

/** Shows one, if allowed and the page is hidden; a click brings the chat back. */
export function showAwayNotification(
  notification: AwayNotification,
  chatTitle: string,
  threadId: string,
): void {
  if (!notificationsSupported() || Notification.permission !== 'granted') return;
  if (document.visibilityState === 'visible') return;
  const { title, body } = wordsOf(notification, chatTitle);
  try {
    // One of each kind per chat: a newer one replaces the one before instead of piling up.
    const shown = new Notification(title, { body, tag: `${notification.kind}:${threadId}` });
    shown.onclick = () => {
      window.focus();
      shown.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker: the title's count still says it.
  }
}

function wordsOf(notification: AwayNotification, chatTitle: string): { title: string; body: string } {
  switch (notification.kind) {
    case 'replyFinished':
      return { title: `Reply finished: ${chatTitle}`, body: notification.text };
    case 'replyFailed':
      return { title: `Reply failed: ${chatTitle}`, body: 'It waits at the head of the queue for you.' };
    case 'queueEmpty':
      return { title: `Queue finished: ${chatTitle}`, body: 'Every queued message has run.' };
    case 'approvalNeeded':
      return {
        title: `Approval needed: ${chatTitle}`,
        body: `The reply waits for you to allow or deny ${notification.text}.`,
      };
  }
}
