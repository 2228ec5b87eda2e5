import { describe, expect, it } from 'vitest';
import { readmeSection } from '../app/utils/readmeSection';

const README = [
  '# App',
  '## Configuration',
  '### A real model',
  'Name it:',
  '```sh',
  '# OpenAI',
  'CHAT_MODEL=openai:gpt-4o-mini',
  '```',
  '### Several models',
  'A list.',
  '## Running in production',
  'Docker.',
].join('\n');

describe('the README sections the help page shows', () => {
  it('runs to the next heading of its level, and a shell comment in a code block is no heading', () => {
    expect(readmeSection('A real model', README)).toBe(
      ['### A real model', 'Name it:', '```sh', '# OpenAI', 'CHAT_MODEL=openai:gpt-4o-mini', '```'].join(
        '\n',
      ),
    );
    expect(readmeSection('Several models', README)).toBe('### Several models\nA list.');
    expect(readmeSection('Configuration', README)).toContain('A list.');
    expect(readmeSection('No such section', README)).toBe('');
  });

  it("finds the sections the page names in the project's own README", () => {
    expect(readmeSection('A real model')).toContain('OPENAI_BASE_URL=http://127.0.0.1:11434/v1');
    expect(readmeSection('Several models')).toContain('CHAT_MODELS');
  });
});
