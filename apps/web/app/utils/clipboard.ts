/**
 * Puts text on the clipboard. The Clipboard API needs a secure context; a self-hosted app on
 * a plain-http LAN address has none, so fall back to a hidden textarea and `copy`.
 * Not VueUse's `useClipboard`: its `copy` reports success even when both ways failed, and the
 * callers need to know (a "Could not copy" toast, the link left selected to copy by hand).
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, the document lost focus): try the old way.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  const focused = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  focused?.focus();
  return copied;
}
