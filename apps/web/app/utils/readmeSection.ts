// The README, as it was when the app was built: the help pages show its sections, so what the app
// tells a person and what the README says never differ.
import readme from '../../../../README.md?raw';

/**
 * The README's section under `### heading` (or `## heading`), up to the next heading of the same
 * or a higher level, heading included; empty when there is none. A `#` line inside a fenced code
 * block (a shell comment) is no heading.
 */
export function readmeSection(heading: string, text: string = readme): string {
  const lines = text.split('\n');
  let inFence = false;
  const levels = lines.map((line) => {
    if (line.startsWith('```')) inFence = !inFence;
    return inFence ? 0 : (/^(#+) /.exec(line)?.[1]?.length ?? 0);
  });
  const start = lines.findIndex(
    (line, index) => (levels[index] ?? 0) >= 2 && line.replace(/^#+ /, '') === heading,
  );
  if (start < 0) return '';
  const level = levels[start] ?? 0;
  const end = levels.findIndex((found, index) => index > start && found > 0 && found <= level);
  return lines
    .slice(start, end < 0 ? undefined : end)
    .join('\n')
    .trim();
}
