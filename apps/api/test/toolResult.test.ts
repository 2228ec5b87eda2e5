import { MAX_TOOL_RESULT_CHARS } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { boundToolResult } from '../src/agent/toolResult';

describe('tool results are bounded before the model and the transcript get them', () => {
  it('keeps a result that fits as it is', () => {
    const result = { now: '2026-12-02T00:00:00.000Z' };
    expect(boundToolResult(result)).toBe(result);
  });

  it('cuts a larger one to the bound, and says so', () => {
    const big = { text: 'x'.repeat(MAX_TOOL_RESULT_CHARS * 2) };
    const bounded = boundToolResult(big) as { truncated: boolean; note: string; partial: string };
    expect(bounded.truncated).toBe(true);
    expect(bounded.partial).toHaveLength(MAX_TOOL_RESULT_CHARS);
    expect(bounded.note).toBe(
      `Result truncated: the first ${MAX_TOOL_RESULT_CHARS} of ${JSON.stringify(big).length} characters are shown.`,
    );
    expect(JSON.stringify(bounded).length).toBeLessThan(MAX_TOOL_RESULT_CHARS + 200);
  });
});
