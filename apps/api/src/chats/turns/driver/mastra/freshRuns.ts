import type { WorkflowsStorage } from '@mastra/core/storage';

/**
 * Mastra writes a `pending` snapshot of every agent run before the model is called (for the
 * agentic loop and its inner workflow: a read and a large JSON insert each, four round trips
 * before the first token) and deletes both when the run ends. Only a run that suspends for a tool
 * approval needs its snapshot, and Mastra writes that one itself (`suspended`, an upsert). So for
 * the runs this instance starts (`fresh`), the pending snapshot stays in memory: reads of a fresh
 * run that has nothing stored answer "none" without asking the database, and the end-of-run
 * deletes are skipped when nothing was stored. Any other write for the run (a suspension, a state
 * update) goes to the database as usual and makes every later call for it go there too; a resumed
 * run (any instance, after a restart too) is not fresh, so it reads its snapshot normally.
 */
export class FreshRuns {
  private readonly fresh = new Set<string>();
  private readonly stored = new Set<string>();

  /** A run id for `agent.stream`; `release` it once the run has ended (successful or not). */
  begin(): { runId: string; release: () => void } {
    const runId = crypto.randomUUID();
    this.fresh.add(runId);
    return {
      runId,
      release: () => {
        this.fresh.delete(runId);
        this.stored.delete(runId);
      },
    };
  }

  /** Fresh and nothing of it in the database yet. */
  private unstored(runId: string | undefined): boolean {
    return runId !== undefined && this.fresh.has(runId) && !this.stored.has(runId);
  }

  /** Wraps the workflows store in place (the one instance Mastra's storage hands out). */
  wrap(store: WorkflowsStorage): void {
    const persist = store.persistWorkflowSnapshot.bind(store);
    const load = store.loadWorkflowSnapshot.bind(store);
    const getRun = store.getWorkflowRunById.bind(store);
    const remove = store.deleteWorkflowRunById.bind(store);
    const updateResults = store.updateWorkflowResults.bind(store);
    const updateState = store.updateWorkflowState.bind(store);
    const markStored = (runId: string) => {
      if (this.fresh.has(runId)) this.stored.add(runId);
    };

    store.persistWorkflowSnapshot = async (args) => {
      if (args.snapshot.status === 'pending' && this.unstored(args.runId)) return;
      markStored(args.runId);
      await persist(args);
    };
    store.loadWorkflowSnapshot = async (args) => (this.unstored(args.runId) ? null : await load(args));
    store.getWorkflowRunById = async (args) => (this.unstored(args.runId) ? null : await getRun(args));
    store.deleteWorkflowRunById = async (args) => {
      if (this.unstored(args.runId)) return;
      await remove(args);
    };
    store.updateWorkflowResults = async (args) => {
      markStored(args.runId);
      return await updateResults(args);
    };
    store.updateWorkflowState = async (args) => {
      markStored(args.runId);
      return await updateState(args);
    };
  }
}
