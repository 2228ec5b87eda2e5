export interface LocalModelDirectives {
  words: number;
  delayMs: number | undefined;
  fail: boolean;
  failAfter: number | undefined;
  tool: string | undefined;
  /** `[[steps:N]]`: call `current_time` N times (one model step each) before answering. */
  steps: number;
  history: boolean;
  /** Reply with a fixed Markdown sample (heading, list, code block, table, link, inline code). */
  markdown: boolean;
  /** `[[fail-summary]]`: a compaction that summarizes this message fails (C3). */
  failSummary: boolean;
  cleanText: string;
}

export const DEFAULT_REPLY_WORDS = 40;
const MAX_REPLY_WORDS = 20_000;
const MAX_DELAY_MS = 60_000;
const MAX_STEPS = 20;

// Only well-formed tokens are directives; anything else in [[...]] stays in the text.
const DIRECTIVE_TOKEN =
  /\[\[(?:(words|delay|fail-after|steps):(\d+)|(tool):([A-Za-z0-9_.-]+)|(fail-summary|fail|history|markdown))\]\]/g;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export function parseDirectives(text: string): LocalModelDirectives {
  const directives: LocalModelDirectives = {
    words: DEFAULT_REPLY_WORDS,
    delayMs: undefined,
    fail: false,
    failAfter: undefined,
    tool: undefined,
    steps: 0,
    history: false,
    markdown: false,
    failSummary: false,
    cleanText: '',
  };

  // When a directive repeats, the last one wins.
  const withoutTokens = text.replace(
    DIRECTIVE_TOKEN,
    (
      _token,
      numericName?: string,
      numericValue?: string,
      toolKeyword?: string,
      toolName?: string,
      flag?: string,
    ) => {
      const amount = Number(numericValue);
      if (numericName === 'words') directives.words = clamp(amount, 1, MAX_REPLY_WORDS);
      else if (numericName === 'delay') directives.delayMs = clamp(amount, 0, MAX_DELAY_MS);
      else if (numericName === 'steps') directives.steps = clamp(amount, 0, MAX_STEPS);
      else if (numericName === 'fail-after') directives.failAfter = clamp(amount, 0, MAX_REPLY_WORDS);
      else if (toolKeyword === 'tool') directives.tool = toolName;
      else if (flag === 'fail') directives.fail = true;
      else if (flag === 'history') directives.history = true;
      else if (flag === 'markdown') directives.markdown = true;
      else if (flag === 'fail-summary') directives.failSummary = true;
      return ' ';
    },
  );

  directives.cleanText = withoutTokens.replace(/\s+/g, ' ').trim();
  return directives;
}
