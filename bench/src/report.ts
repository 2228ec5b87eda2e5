import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { Row } from './rows';
import type { Summary } from './stats';

export interface RunInfo {
  date: string;
  mode: 'quick' | 'full';
  node: string;
  cpu: string;
  memory: string;
  database: string;
  durationS: number;
}

export function runInfo(mode: 'quick' | 'full', database: string, durationS: number): RunInfo {
  const cpuList = cpus();
  return {
    date: new Date().toISOString().slice(0, 10),
    mode,
    node: process.version,
    cpu: `${cpuList.length} x ${cpuList[0]?.model.trim() ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GB`,
    database,
    durationS,
  };
}

function number(value: number, unit: Row['unit']): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (unit === 'ms') return value < 10 ? value.toFixed(1) : value.toFixed(0);
  return value.toFixed(0);
}

function cell(value: Summary | number | undefined, unit: Row['unit']): string {
  if (value === undefined) return '-';
  if (typeof value === 'number')
    return unit === 'count' ? number(value, unit) : `${number(value, unit)} ${unit}`;
  const suffix = unit === 'count' ? '' : ` ${unit}`;
  return `${number(value.median, unit)} / ${number(value.p90, unit)} / ${number(value.p99, unit)}${suffix} (n=${value.n})`;
}

function verdict(row: Row): string {
  if (row.notRun) return 'not run';
  if (row.met === undefined) return '-';
  return row.met ? 'met' : '**missed**';
}

/** The table (timings are `median / p90 / p99`), with padded columns as Biome formats Markdown. */
export function markdownTable(rows: Row[]): string {
  const header = ['figure', 'bare baseline', 'this app', 'ratio', 'target', 'met?'];
  const body = rows.map((row) => {
    const note = row.notRun ? ` (not run: ${row.notRun})` : row.note ? ` (${row.note})` : '';
    return [
      `${row.figure}${note}`.replaceAll('|', '/').replaceAll('\n', ' '),
      cell(row.baseline, row.unit),
      cell(row.app, row.unit),
      row.ratio ?? '-',
      row.target ?? '-',
      verdict(row),
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => (cells[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((text, column) => text.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

export function generatedSection(rows: Row[], info: RunInfo): string {
  return [
    `Run of ${info.date}, \`pnpm bench\` (${info.mode} mode, ${info.durationS} s): Node ${info.node}, ${info.cpu}, ${info.memory} RAM, PostgreSQL ${info.database}.`,
    '',
    'Timings are `median / p90 / p99` over n samples, measured by the harness as an HTTP client.',
    '',
    markdownTable(rows),
  ].join('\n');
}

const BEGIN = '<!-- bench:begin (written by `pnpm bench`; edit outside these markers) -->';
const END = '<!-- bench:end -->';

const SKELETON = `# Benchmarks

\`pnpm bench\` starts a bare baseline server (h3 + AI SDK \`streamText\` over the same local model), the
real API (and the built web app) on a database it creates and drops, and measures both over HTTP in
the same run.

${BEGIN}
${END}
`;

/** Replaces the generated part of `file` (between the markers), keeping the hand-written rest. */
export function writeReport(file: string, rows: Row[], info: RunInfo): void {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : SKELETON;
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const base = start >= 0 && end > start ? current : `${current.trimEnd()}\n\n${BEGIN}\n${END}\n`;
  const from = base.indexOf(BEGIN) + BEGIN.length;
  const to = base.indexOf(END);
  writeFileSync(file, `${base.slice(0, from)}\n${generatedSection(rows, info)}\n${base.slice(to)}`);
}
