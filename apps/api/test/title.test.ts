import { describe, expect, it } from 'vitest';
import { titleFromMessage } from '../src/chats/threads/title';

describe('thread titles from the first message', () => {
  it('uses the first non-empty line as plain text', () => {
    expect(titleFromMessage('\n\n## Explain how **tides** work, with a `code` sample\nmore')).toBe(
      'Explain how tides work, with a code sample',
    );
    expect(titleFromMessage('See [the docs](https://example.com) please')).toBe('See the docs please');
  });

  it('drops local-model directives and falls back to "New chat"', () => {
    expect(titleFromMessage('hello [[words:5]] there')).toBe('hello there');
    expect(titleFromMessage('rename my_var_name')).toBe('rename my_var_name');
    expect(titleFromMessage('[[fail]]')).toBe('New chat');
  });

  it('cuts long lines at a word with an ellipsis', () => {
    const title = titleFromMessage('word '.repeat(30));
    expect(title.length).toBeLessThanOrEqual(61);
    expect(title.endsWith('word…')).toBe(true);
  });
});
