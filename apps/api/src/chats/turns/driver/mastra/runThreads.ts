import type { StorageThreadType } from '@mastra/core/memory';
import type { MemoryStorage } from '@mastra/core/storage';

/**
 * Mastra reads a run's memory thread row again and again (`getThreadById`: four times before the
 * first token and once after saving, a query each). While a run of this instance uses a thread,
 * the row is read once and then answered from here. Only while: the rows are remembered per
 * running thread and forgotten when its last run ends, so nothing outlives a run. A write to the
 * thread through this store (save, update, delete, a move to another resource) updates or drops
 * the copy; other instances do not write a thread while a turn of it runs here (a thread is
 * deleted or moved only once its running turn is stopped).
 */
export class RunThreads {
  /** Running threads: how many runs use each, and the row once read. */
  private readonly inUse = new Map<string, { runs: number; row?: StorageThreadType | null }>();

  /** A run starts using `threadId`; call the release when it ends (successful or not). */
  begin(threadId: string): () => void {
    const entry = this.inUse.get(threadId) ?? { runs: 0 };
    entry.runs += 1;
    this.inUse.set(threadId, entry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.runs -= 1;
      if (entry.runs <= 0) this.inUse.delete(threadId);
    };
  }

  /** Wraps the memory store in place (the one instance Mastra's storage hands out). */
  wrap(store: MemoryStorage): void {
    const getThread = store.getThreadById.bind(store);
    const saveThread = store.saveThread.bind(store);
    const updateThread = store.updateThread.bind(store);
    const deleteThread = store.deleteThread.bind(store);
    const moveThread = store.updateThreadResourceId?.bind(store);
    const forget = (threadId: string) => {
      const entry = this.inUse.get(threadId);
      if (entry) entry.row = undefined;
    };

    store.getThreadById = async (args) => {
      const entry = this.inUse.get(args.threadId);
      if (!entry) return await getThread(args);
      if (entry.row === undefined) entry.row = await getThread({ threadId: args.threadId });
      const row = entry.row;
      if (!row || (args.resourceId !== undefined && row.resourceId !== args.resourceId)) return null;
      // A copy: a caller that changes what it got must not change what the next one gets.
      return structuredClone(row);
    };
    store.saveThread = async (args) => {
      forget(args.thread.id);
      return await saveThread(args);
    };
    store.updateThread = async (args) => {
      forget(args.id);
      return await updateThread(args);
    };
    store.deleteThread = async (args) => {
      forget(args.threadId);
      return await deleteThread(args);
    };
    if (moveThread) {
      store.updateThreadResourceId = async (args) => {
        forget(args.threadId);
        return await moveThread(args);
      };
    }
  }
}
