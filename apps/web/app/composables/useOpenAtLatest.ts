/** How long after a transcript first shows its messages it keeps following their growth down. */
const SETTLE_MS = 2000;
/** Room above the "While you were away" divider when a chat opens at it. */
const DIVIDER_MARGIN_PX = 16;

/**
 * Opens a chat at its latest message, or, when replies finished while the person was away (Q15),
 * at the "While you were away" divider (`firstUnseen`), with the first of them below it: landing
 * under everything new would leave them scrolling up to find where they left off. The transcript is on screen before the thread
 * detail arrives (empty while loading), so a scroll to the bottom when it mounts lands on nothing;
 * and a long transcript keeps growing for a while after its messages arrive (Markdown, code
 * highlighting, off-screen messages laid out as they are reached). So when messages first appear,
 * this scrolls to the bottom (or the divider) and stays there while the content settles, until the
 * person scrolls themselves (wheel, touch, keys, the scrollbar, focus) or SETTLE_MS has passed.
 */
export function useOpenAtLatest(
  content: () => HTMLElement | null | undefined,
  hasMessages: () => boolean,
  away: {
    /** The divider, when the transcript shows one. */
    firstUnseen: () => HTMLElement | null | undefined;
    /** The chat opened at the divider rather than at its latest message. */
    openedThere: () => void;
  } | null = null,
) {
  let stop: (() => void) | null = null;

  function pinAtOpening(element: HTMLElement): void {
    stop?.();
    const parent = scrollParentOf(element);
    const until = performance.now() + SETTLE_MS;
    let frame = 0;
    const toPlace = () => {
      if (performance.now() > until) return stop?.();
      const divider = away?.firstUnseen();
      if (!divider) {
        parent.scrollTop = parent.scrollHeight;
        return;
      }
      // The divider a little below the top edge, so it reads as a heading over what is new.
      const { top } = divider.getBoundingClientRect();
      parent.scrollTop += top - parent.getBoundingClientRect().top - DIVIDER_MARGIN_PX;
      // Everything new may fit on the screen: then the chat is at its latest message after all.
      if (parent.scrollHeight - parent.scrollTop - parent.clientHeight > DIVIDER_MARGIN_PX)
        away?.openedThere();
    };
    const observer = new ResizeObserver(toPlace);
    observer.observe(element);
    // The person takes over: a scroll they started, or focus moved into the transcript (Tab from
    // the composer scrolls to it), ends the pinning at once.
    const release = () => stop?.();
    const events = ['wheel', 'touchstart', 'keydown', 'pointerdown', 'focusin'] as const;
    for (const name of events) parent.addEventListener(name, release, { passive: true });
    // Frame by frame as well: a layout change that resizes nothing observed still moves the end.
    const follow = () => {
      toPlace();
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
      if (element) pinAtOpening(element);
    },
    { immediate: true, flush: 'post' },
  );

  onBeforeUnmount(() => stop?.());

  /** The person asked for another place (the Latest button, outside the transcript): stop pinning. */
  return { release: () => stop?.() };
}
