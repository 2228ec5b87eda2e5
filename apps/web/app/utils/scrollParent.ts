/** The element that scrolls `node`: its nearest ancestor with overflow-y auto or scroll. */
export function scrollParentOf(node: HTMLElement): HTMLElement {
  let current: HTMLElement | null = node.parentElement;
  while (current && current !== document.body && current !== document.documentElement) {
    if (/auto|scroll/.test(getComputedStyle(current).overflowY)) return current;
    current = current.parentElement;
  }
  return document.documentElement;
}
