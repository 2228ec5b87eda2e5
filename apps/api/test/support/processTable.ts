import { readdirSync, readFileSync } from 'node:fs';

/**
 * The live processes whose parent is `pid`, from /proc (a zombie has ended and only waits to be
 * reaped, so it is not counted).
 */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (name) state ppid ...`: the name may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid && state !== 'Z') children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

/** The command line of a process, its arguments joined by NUL; '' once it has ended. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The live processes whose command line holds `text`. */
export function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => commandLineOf(pid).includes(text));
}
