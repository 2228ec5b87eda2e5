import type { Thread } from '@chat/contracts';

export interface DateGroup {
  label: 'Today' | 'Yesterday' | 'Previous 7 days' | 'Older';
  threads: Thread[];
}

/**
 * Threads grouped by their last activity, in the browser's time zone: Today, Yesterday, Previous
 * 7 days, Older. Empty groups are left out. Newest activity first, the order the API lists them
 * in: a thread this tab just renamed (the API answers with its new `updatedAt`) moves up at once,
 * as it would after a reload.
 */
export function groupThreadsByDate(threads: readonly Thread[], now: Date = new Date()): DateGroup[] {
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const day = 24 * 60 * 60 * 1000;
  const groups: DateGroup[] = [
    { label: 'Today', threads: [] },
    { label: 'Yesterday', threads: [] },
    { label: 'Previous 7 days', threads: [] },
    { label: 'Older', threads: [] },
  ];
  for (const thread of [...threads].sort(byActivity)) {
    const at = Date.parse(thread.updatedAt);
    const index =
      at >= startOfToday ? 0 : at >= startOfToday - day ? 1 : at >= startOfToday - 7 * day ? 2 : 3;
    groups[index]?.threads.push(thread);
  }
  return groups.filter((group) => group.threads.length > 0);
}

/** Newest `updatedAt` first, then the larger id: the API's `(updated_at, id) desc`. */
function byActivity(a: Thread, b: Thread): number {
  const at = Date.parse(b.updatedAt) - Date.parse(a.updatedAt);
  if (at !== 0) return at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
