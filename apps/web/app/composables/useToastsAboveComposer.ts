import type { Ref } from 'vue';

/** The CSS variables app.vue's toaster is placed by: its distance from the bottom, its middle. */
const CLEARANCE = '--composer-clearance';
const MIDDLE = '--composer-middle';

/**
 * Toasts (a deleted or moved Dock item's Undo above all) float just above the message box, by the
 * Dock where the person works, instead of in a far corner; and never over the box or its buttons.
 * The box's height changes (lines, images, a phone's keyboard), so its top is followed, not assumed.
 */
export function useToastsAboveComposer(composer: Ref<HTMLElement | null | undefined>): void {
  const place = () => {
    const element = composer.value;
    if (!element) return;
    const box = element.getBoundingClientRect();
    const clearance = Math.max(0, window.innerHeight - box.top);
    document.documentElement.style.setProperty(CLEARANCE, `${Math.round(clearance)}px`);
    // Over the box's middle, not the window's: beside a sidebar the two differ.
    document.documentElement.style.setProperty(MIDDLE, `${Math.round(box.left + box.width / 2)}px`);
  };
  let observer: ResizeObserver | undefined;
  // The box can also move without changing size (the page above it reflowed): a toast about to
  // show is placed by where the box is now.
  const toasts = useToast().toasts;
  watch(() => toasts.value.length, place, { flush: 'pre' });
  onMounted(() => {
    observer = new ResizeObserver(place);
    if (composer.value) observer.observe(composer.value);
    window.addEventListener('resize', place);
    place();
  });
  onBeforeUnmount(() => {
    observer?.disconnect();
    window.removeEventListener('resize', place);
    document.documentElement.style.removeProperty(CLEARANCE);
    document.documentElement.style.removeProperty(MIDDLE);
  });
}
