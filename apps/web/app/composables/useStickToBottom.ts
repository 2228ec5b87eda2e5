/** How far from the bottom (px) still counts as reading the latest message. */
const AT_LATEST = 24;

/**
 * Keeps a transcript that is at its latest message there while the layout changes under it: a
 * reply growing, a badge appearing after Stop, the Dock below growing or shrinking (it takes its
 * height from the scroll pane). A person who scrolls up is left where they are, and `atLatest`
 * says so (the page then offers a way back, `scrollToLatest`).
 */
export function useStickToBottom(content: () => HTMLElement | null | undefined) {
  const atLatest = ref(true);
  let pane: HTMLElement | null = null;
  let observer: ResizeObserver | null = null;

  /** Where the pane was at the last scroll event: only a scroll up leaves the latest message. */
  let lastTop = 0;

  const distance = (element: HTMLElement) => element.scrollHeight - element.scrollTop - element.clientHeight;

  /**
   * Near the bottom is at the latest message; a scroll up is a person leaving it. Anything else
   * keeps the state: a reply can grow past the margin between our own scroll to the bottom and
   * its scroll event (a busy machine, a fast reply), and that is not the person scrolling away.
   */
  function onScroll(): void {
    if (!pane) return;
    const top = pane.scrollTop;
    if (distance(pane) <= AT_LATEST) atLatest.value = true;
    else if (top < lastTop) atLatest.value = false;
    lastTop = top;
  }

  /** The pane or the transcript changed size: one at its latest message stays there. */
  function onResize(): void {
    if (pane && atLatest.value) pane.scrollTop = pane.scrollHeight;
  }

  function scrollToLatest(): void {
    if (!pane) return;
    atLatest.value = true;
    pane.scrollTop = pane.scrollHeight;
  }

  /** The transcript was put somewhere else on purpose (a chat opened at "While you were away"). */
  function leaveLatest(): void {
    atLatest.value = false;
  }

  onMounted(() => {
    const element = content();
    if (!element) return;
    pane = scrollParentOf(element);
    lastTop = pane.scrollTop;
    pane.addEventListener('scroll', onScroll, { passive: true });
    observer = new ResizeObserver(onResize);
    observer.observe(pane);
    observer.observe(element);
  });
  onBeforeUnmount(() => {
    pane?.removeEventListener('scroll', onScroll);
    observer?.disconnect();
  });

  return { atLatest: readonly(atLatest), scrollToLatest, leaveLatest };
}
