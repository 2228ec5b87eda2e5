/** How long after a transcript first shows its messages it keeps following their growth down. */
const SETTLE_MS = 2000;

/**
 * Opens a chat at its latest message, every time. The transcript is on screen before the thread
 * detail arrives (empty while loading), so a scroll to the bottom when it mounts lands on nothing;
 * and a long transcript keeps growing for a while after its messages arrive (Markdown, code
 * highlighting, off-screen messages laid out as they are reached). So when messages first appear,
 * this scrolls to the bottom and stays there while the content settles, until the person scrolls
 * themselves (wheel, touch, keys, the scrollbar, focus) or SETTLE_MS has passed.
 */
export function useOpenAtLatest(content: () => HTMLElement | null | undefined, hasMessages: () => boolean) {
  let stop: (() => void) | null = null;

  function pinToBottom(element: HTMLElement): void {
    stop?.();
    const parent = scrollParentOf(element);
    const until = performance.now() + SETTLE_MS;
    let frame = 0;
    const toBottom = () => {
      if (performance.now() > until) return stop?.();
      parent.scrollTop = parent.scrollHeight;
    };
    const observer = new ResizeObserver(toBottom);
    observer.observe(element);
    // The person takes over: a scroll they started, or focus moved into the transcript (Tab from
    // the composer scrolls to it), ends the pinning at once.
    const release = () => stop?.();
    const events = ['wheel', 'touchstart', 'keydown', 'pointerdown', 'focusin'] as const;
    for (const name of events) parent.addEventListener(name, release, { passive: true });
    // Frame by frame as well: a layout change that resizes nothing observed still moves the end.
    const follow = () => {
      toBottom();
      if (stop) frame = requestAnimationFrame(follow);
    };
    stop = () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
      for (const name of events) parent.removeEventListener(name, release);
      stop = null;
    };
    follow();
  }

  watch(
    hasMessages,
    async (has, had) => {
      if (!has || had) return;
      await nextTick();
      const element = content();
      if (element) pinToBottom(element);
    },
    { immediate: true, flush: 'post' },
  );

  onBeforeUnmount(() => stop?.());
}
