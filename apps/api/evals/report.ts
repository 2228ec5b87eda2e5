import type { ProfileResult, ScoreCell } from './profile';

function cell(value: ScoreCell | undefined): string {
  if (!value) return '-';
  if ('notRun' in value) return 'not run';
  return value.score.toFixed(2);
}

function table(header: string[], body: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: string[]) => row.map((value, column) => value.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)];
}

/** The results as a text table: one row per case, a summary line per kind, the verdict. */
export function formatReport(result: ProfileResult): string {
  const lines: string[] = [
    `${result.profile}: model ${result.model}, judge ${result.judge ?? 'none (not run)'}` +
      (result.sabotage ? `, sabotage ${result.sabotage}` : ''),
    '',
  ];
  const header = ['case', 'kind', 'mode', ...result.scorerIds, 'result'];
  const body = result.rows.map((row) => [
    row.id,
    row.kind,
    row.mode,
    ...result.scorerIds.map((id) => cell(row.scores[id])),
    row.passed ? 'pass' : 'FAIL',
  ]);
  lines.push(...table(header, body), '');

  for (const kind of result.kinds) {
    const parts = Object.entries(kind.scorers).map(([id, summary]) =>
      'notRun' in summary
        ? `${id} not run (${summary.notRun})`
        : `${id} ${summary.average.toFixed(2)}/${summary.threshold}${summary.passed ? '' : ' MISSED'}`,
    );
    const detail = kind.error ? `could not be scored: ${kind.error}` : parts.join(', ');
    lines.push(
      `${kind.passed ? 'pass' : 'FAIL'}  ${kind.kind}: ${kind.passedCases}/${kind.cases} cases; ${detail}`,
    );
  }

  const failures = result.rows.flatMap((row) =>
    Object.entries(row.scores).flatMap(([id, value]) =>
      'score' in value && value.score < 1 && value.reason
        ? [`  ${row.id} ${row.mode} ${id}: ${value.reason}`]
        : [],
    ),
  );
  if (failures.length > 0) lines.push('', 'Reasons for scores below 1.0:', ...failures);
  lines.push('', result.passed ? 'PASSED: every threshold met' : 'FAILED: a threshold was missed');
  return lines.join('\n');
}
