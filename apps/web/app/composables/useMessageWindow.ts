import type { Transcript } from '~/threadPage/state';
import { windowOf } from '~/threadPage/transcript';

/** Messages rendered at first, and added each time the person reaches the top. */
export const MESSAGE_WINDOW = 100;
/** How close to the top (px) a scroll up has to come before earlier messages are added. */
const NEAR_TOP = 600;

/**
 * Renders the latest messages of a long chat, and earlier ones as the person scrolls up. Every
 * rendered message is a handful of components (actions, tooltips, feedback), so a chat of
 * thousands rendered whole takes seconds to open and re-checks every message on each streamed
 * delta; the latest MESSAGE_WINDOW keep opening and streaming as cheap as a short chat's (the
 * window is taken from the end, `windowOf`, without copying the transcript). Adding earlier
 * messages keeps what is on screen where it was.
 */
export function useMessageWindow(
  transcript: () => Transcript,
  content: () => HTMLElement | null | undefined,
) {
  const size = ref(MESSAGE_WINDOW);
  const window = computed(() => windowOf(transcript(), size.value));
  const shown = computed(() => window.value.shown);
  const hiddenCount = computed(() => window.value.hiddenCount);

  /** Adds the next MESSAGE_WINDOW earlier messages above, without moving what is in view. */
  async function showEarlier(): Promise<void> {
    if (hiddenCount.value === 0) return;
    const element = content();
    const anchor = element?.querySelector('article');
    const before = anchor?.getBoundingClientRect().top;
    size.value += MESSAGE_WINDOW;
    await nextTick();
    if (!element || !anchor || before === undefined || !anchor.isConnected) return;
    // The browser's scroll anchoring may have kept it in place already; correct what is left.
    const moved = anchor.getBoundingClientRect().top - before;
    if (moved !== 0) scrollParentOf(element).scrollTop += moved;
  }

  let parent: HTMLElement | null = null;
  let adding = false;
  const onScroll = async () => {
    if (adding || !parent || parent.scrollTop > NEAR_TOP || hiddenCount.value === 0) return;
    adding = true;
    try {
      await showEarlier();
    } finally {
      adding = false;
    }
  };
  onMounted(() => {
    const element = content();
    if (!element) return;
    parent = scrollParentOf(element);
    parent.addEventListener('scroll', onScroll, { passive: true });
  });
  onBeforeUnmount(() => parent?.removeEventListener('scroll', onScroll));

  return { shown, hiddenCount, showEarlier };
}
