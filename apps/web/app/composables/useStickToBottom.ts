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

  const distance = (element: HTMLElement) => element.scrollHeight - element.scrollTop - element.clientHeight;

  function onScroll(): void {
    if (pane) atLatest.value = distance(pane) <= AT_LATEST;
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

  onMounted(() => {
    const element = content();
    if (!element) return;
    pane = scrollParentOf(element);
    pane.addEventListener('scroll', onScroll, { passive: true });
    observer = new ResizeObserver(onResize);
    observer.observe(pane);
    observer.observe(element);
  });
  onBeforeUnmount(() => {
    pane?.removeEventListener('scroll', onScroll);
    observer?.disconnect();
  });

  return { atLatest: readonly(atLatest), scrollToLatest };
}
