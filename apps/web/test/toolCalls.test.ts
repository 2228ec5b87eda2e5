import { describe, expect, it } from 'vitest';
import { toolErrorText, toolSummary } from '../app/utils/toolCalls';

describe('a failed tool call on its card', () => {
  it("shows the error's message, never the serialised error", () => {
    const serialised = JSON.stringify({
      message: 'The tool current_time is off in this chat; it did not run.',
      name: 'MastraError',
      stack: 'Error: The tool current_time is off…\n    at execute (tools.ts:1:1)',
      details: { toolCallId: 'call-1' },
    });
    expect(toolErrorText(serialised)).toBe('The tool current_time is off in this chat; it did not run.');
    expect(toolErrorText('Plain words.\n    at somewhere')).toBe('Plain words.');
    expect(toolErrorText('{"no":"message"}')).toBe('{"no":"message"}');
    expect(toolErrorText('')).toBe('The tool call failed.');
  });
});

describe("a tool's name on its card", () => {
  it("names an MCP server's tool by its own name and its server's, a built-in tool as it is", () => {
    expect(toolSummary('mcp__fixture__echo', ['approved'])).toBe('You approved running echo from fixture');
    expect(toolSummary('mcp__files__read__all', ['done', 'done'])).toBe('Used read__all from files twice');
    expect(toolSummary('mcp__fixture__slow', ['failed'])).toBe('slow from fixture failed');
    expect(toolSummary('current_time', ['running'])).toBe('Using current_time…');
    expect(toolSummary('save_note', ['denied'])).toBe('You denied saving the note');
  });
});
