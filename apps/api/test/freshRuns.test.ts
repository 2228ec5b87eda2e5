import type { WorkflowsStorage } from '@mastra/core/storage';
import { describe, expect, it } from 'vitest';
import { FreshRuns } from '../src/chats/turns/driver/mastra/freshRuns';
import type { ApiClient } from './support/client';
import { readChunks, readUntilWords } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

/**
 * The send path writes no Mastra workflow snapshot for an ordinary turn (four round trips before
 * the first token today's Mastra would spend), while a run that suspends still has its own.
 */
describe('agent runs without pending snapshots', () => {
  let api: TestApi;
  let client: ApiClient;
  useTestApi((started) => {
    ({ api, client } = started);
  });

  const snapshotRows = async (runId?: string) => {
    const { sql } = api.runtime.database;
    const rows = runId
      ? await sql`select workflow_name from mastra.mastra_workflow_snapshot where run_id = ${runId}`
      : await sql`select workflow_name from mastra.mastra_workflow_snapshot`;
    return rows.map((row) => row.workflow_name as string).sort();
  };

  const workflows = async () =>
    (await api.runtime.chatAgent.memory.storage.getStore('workflows')) as WorkflowsStorage;

  it('stores no snapshot while a reply streams, nor after it', async () => {
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'long [[words:200]] [[delay:10]]');
    expect(response.status).toBe(200);
    await readUntilWords(response, 3);
    expect(await snapshotRows()).toEqual([]);
    await readChunks(response);
    expect(await snapshotRows()).toEqual([]);
  });

  it('keeps a pending snapshot of a fresh run in memory, and stores anything else', async () => {
    const store = await workflows();
    // Fresh runs of its own, over the store the running API's driver wraps too.
    const runs = new FreshRuns();
    runs.wrap(store);
    const { runId, release } = runs.begin();
    const snapshot = (status: 'pending' | 'suspended') =>
      ({
        runId,
        status,
        value: {},
        context: {},
        activePaths: [],
        activeStepsPath: {},
        serializedStepGraph: [],
        suspendedPaths: {},
        resumeLabels: {},
        waitingPaths: {},
        timestamp: Date.now(),
      }) as unknown as Parameters<WorkflowsStorage['persistWorkflowSnapshot']>[0]['snapshot'];

    await store.persistWorkflowSnapshot({
      workflowName: 'agentic-loop',
      runId,
      snapshot: snapshot('pending'),
    });
    expect(await snapshotRows(runId)).toEqual([]);
    expect(await store.getWorkflowRunById({ runId, workflowName: 'agentic-loop' })).toBeNull();

    await store.persistWorkflowSnapshot({
      workflowName: 'agentic-loop',
      runId,
      snapshot: snapshot('suspended'),
    });
    expect(await snapshotRows(runId)).toEqual(['agentic-loop']);
    expect((await store.getWorkflowRunById({ runId, workflowName: 'agentic-loop' }))?.runId).toBe(runId);
    release();
    // Another instance (or this one later) reads and deletes it like any stored run.
    expect((await store.loadWorkflowSnapshot({ workflowName: 'agentic-loop', runId }))?.status).toBe(
      'suspended',
    );
    await store.deleteWorkflowRunById({ runId, workflowName: 'agentic-loop' });
    expect(await snapshotRows(runId)).toEqual([]);

    // A run id that is not fresh is never short-cut: its pending snapshot is stored.
    const other = crypto.randomUUID();
    await store.persistWorkflowSnapshot({
      workflowName: 'agentic-loop',
      runId: other,
      snapshot: { ...snapshot('pending'), runId: other },
    });
    expect(await snapshotRows(other)).toEqual(['agentic-loop']);
    await store.deleteWorkflowRunById({ runId: other, workflowName: 'agentic-loop' });
  });
});
