import { describe, expect, it } from 'vitest';
import { toolErrorText } from '../app/utils/toolCalls';

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
