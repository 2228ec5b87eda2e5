import { describe, expect, it } from 'vitest';
import { toolCallDetail, toolErrorText, toolResultText, toolSummary } from '../app/utils/toolCalls';

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

describe("an agent's tool call on its card (A6)", () => {
  it('says what the call is about: the command, the file, the pattern and where', () => {
    expect(toolCallDetail('Bash', { command: 'npm test', description: 'Run the tests' })).toBe('npm test');
    expect(toolCallDetail('Read', { file_path: '/srv/app/package.json' })).toBe('/srv/app/package.json');
    expect(toolCallDetail('Edit', { file_path: '/srv/app/a.ts', old_string: 'a', new_string: 'b' })).toBe(
      '/srv/app/a.ts',
    );
    expect(toolCallDetail('Write', { file_path: '/srv/app/b.ts', content: 'x' })).toBe('/srv/app/b.ts');
    expect(toolCallDetail('Grep', { pattern: 'TODO', path: 'src' })).toBe('TODO in src');
    expect(toolCallDetail('WebFetch', { url: 'https://example.org/', prompt: 'read' })).toBe(
      'https://example.org/',
    );
  });

  it('keeps it to one line of bounded length, and has none for tools without one', () => {
    expect(toolCallDetail('Bash', { command: 'cd app\nnpm test' })).toBe('cd app …');
    expect(toolCallDetail('Bash', { command: 'x'.repeat(500) })?.length).toBe(160);
    expect(toolCallDetail('Bash', { command: '   ' })).toBeNull();
    expect(toolCallDetail('Bash', {})).toBeNull();
    expect(toolCallDetail('current_time', { timezone: 'UTC' })).toBeNull();
    expect(toolCallDetail('mcp__fixture__echo', { command: 'hi' })).toBeNull();
  });

  it('shows a text result as the text, anything else as JSON', () => {
    expect(toolResultText('step 1\nstep 2')).toBe('step 1\nstep 2');
    expect(toolResultText({ time: '12:00' })).toBe('{\n  "time": "12:00"\n}');
  });
});
