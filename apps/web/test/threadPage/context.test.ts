import { describe, expect, it } from 'vitest';
import { contextMeterView } from '../../app/threadPage/views';
import { contextOf, detail, exchange, Page, queueOf, settled, turn } from '../support/threadFacts';

const MARKER = {
  id: 'marker-1',
  kind: 'summary' as const,
  summary: 'They talked about queues.',
  error: null,
  createdAt: '2026-12-01T10:00:00.000Z',
  messageId: 'user-b',
};

describe('the context meter (C2)', () => {
  it("shows the detail's figure and turns amber near the limit", () => {
    const page = Page.opened(detail(exchange('a'), queueOf(null), [], contextOf(2_000)));
    expect(contextMeterView(page.state)).toMatchObject({ percent: 25, level: 'ok', canCompact: true });
    expect(contextMeterView(page.state)?.label).toBe('Context: 2,000 of 8,000 tokens');

    page.feed(settled(turn('b', 'completed'), queueOf(null), exchange('b'), contextOf(5_200)));
    expect(contextMeterView(page.state)).toMatchObject({ percent: 65, level: 'warn' });
  });

  it('ignores the meter of a settled turn of a version that is not shown', () => {
    const page = Page.opened(detail(exchange('a'), queueOf(null), [], contextOf(2_000)));
    page.feed(
      settled(
        turn('b', 'completed', 'text of b', { branchId: 'other' }),
        queueOf(null),
        undefined,
        contextOf(7_000),
      ),
    );
    expect(page.state.context?.used).toBe(2_000);
  });

  it('locks Compact now while a reply runs', () => {
    const page = Page.opened(detail(exchange('a'), queueOf(turn('b', 'running'))));
    expect(contextMeterView(page.state)).toMatchObject({ canCompact: false });
    expect(contextMeterView(page.state)?.compactLockedReason).toMatch(/Wait for the reply/);
  });
});

describe('compaction (C3)', () => {
  it("shows a turn's compaction while it runs and until its turn settles with the new marker", () => {
    const page = Page.opened(detail(exchange('a'), queueOf(turn('b', 'running'))));
    page.feed({ type: 'compaction.progress', turnId: 'b', progress: { status: 'compacting' } });
    expect(contextMeterView(page.state)).toMatchObject({ compacting: true, failed: null });
    page.feed({ type: 'compaction.progress', turnId: 'b', progress: { status: 'failed', error: 'no' } });
    expect(contextMeterView(page.state)).toMatchObject({ compacting: false, failed: 'no' });

    page.feed(settled(turn('b', 'completed'), queueOf(null), exchange('b'), contextOf(900, MARKER)));
    expect(page.state.compaction).toBeNull();
    expect(page.state.context?.marker?.messageId).toBe('user-b');
  });

  it("Compact now: compacting while it is out, then the answer's meter and marker", () => {
    const page = Page.opened(detail(exchange('a'), queueOf(null), [], contextOf(3_000)));
    page.feed({ type: 'compactNow.requested' });
    expect(contextMeterView(page.state)).toMatchObject({ compacting: true, canCompact: false });
    page.feed({
      type: 'compactNow.answered',
      answer: { marker: MARKER, context: contextOf(1_000, MARKER) },
    });
    expect(contextMeterView(page.state)).toMatchObject({ compacting: false, canCompact: true, percent: 13 });
    expect(page.state.context?.marker?.id).toBe('marker-1');
  });

  it('a refused Compact now says why in the banner', () => {
    const page = Page.opened(detail(exchange('a')));
    page.feed({ type: 'compactNow.requested' });
    page.feed({
      type: 'compactNow.refused',
      error: { message: 'Wait for the reply to finish.', status: 409, code: 'thread_busy', retryable: false },
    });
    expect(page.state.compaction).toBeNull();
    expect(page.state.notice?.message).toBe('Wait for the reply to finish.');
  });

  it('another tab compacted: the detail is read again', () => {
    const page = Page.opened(detail(exchange('a')));
    page.feed({ type: 'server', event: { type: 'context.changed', threadId: page.state.threadId } });
    expect(page.effectTypes()).toContain('readDetail');
  });
});
