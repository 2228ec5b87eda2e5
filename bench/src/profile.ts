/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `pnpm bench --cpu-prof=DIR`): where
 * the samples land by package and by function (self time), and the inclusive time of functions
 * whose name matches --focus.
 *
 *   node --import tsx src/profile.ts FILE.cpuprofile [--top=25] [--focus=recall,toAISdkMessages]
 *     [--callers=addOne]   whose time it is: the nearest function of the API, @mastra/memory or
 *                          @mastra/pg above each sample of that function (async calls cut stacks)
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function packageOf(url: string): string {
  const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match?.[1]) return match[1];
  if (url.includes('/apps/api/src/')) return 'apps/api/src';
  if (url.startsWith('node:') || url === '') return url === '' ? '(native/gc/idle)' : 'node internals';
  return url.replace(/^file:\/\/.*\/(apps|packages)\//, '$1/');
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url
    .replace(/^file:\/\/.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '')
    .replace(/^file:\/\/.*\/apps\//, 'apps/');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

const CALLER = /\/apps\/api\/src\/|@mastra\/(memory|pg)\//;

const top = (map: Map<string, number>, count: number, total: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([name, ms]) =>
        `${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${name}`,
    )
    .join('\n');

function main() {
  const [file, ...args] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile.ts FILE.cpuprofile [--top=N] [--focus=a,b]');
  const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const count = Number(option('top') ?? 25);
  const focus = option('focus')?.split(',') ?? [];
  const callersOf = option('callers');
  const callers = new Map<string, number>();
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const self = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  let total = 0;
  let idle = 0;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id);
    if (!node) continue;
    total += ms;
    if (node.callFrame.functionName === '(idle)') idle += ms;
    byFunction.set(label(node), (byFunction.get(label(node)) ?? 0) + ms);
    const pkg = packageOf(node.callFrame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    if (callersOf) attributeToApi(id, ms);
    // Inclusive time of focused functions: count each sample once per matching name on its stack.
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)?.callFrame.functionName ?? '';
      for (const name of focus) {
        if (frame === name && !seen.has(name)) {
          seen.add(name);
          inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
        }
      }
    }
  }
  function attributeToApi(id: number, ms: number) {
    let inside = false;
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const node = byId.get(current);
      if (!node) return;
      if (node.callFrame.functionName === callersOf) inside = true;
      else if (inside && CALLER.test(node.callFrame.url)) {
        callers.set(label(node), (callers.get(label(node)) ?? 0) + ms);
        return;
      }
    }
    if (inside) callers.set('(no API frame)', (callers.get('(no API frame)') ?? 0) + ms);
  }
  const busy = total - idle;
  console.log(`total ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms, busy ${busy.toFixed(0)} ms\n`);
  console.log(`By package (self time, % of total):\n${top(byPackage, count, total)}\n`);
  console.log(`By function (self time, % of total):\n${top(byFunction, count, total)}\n`);
  if (focus.length > 0) console.log(`Inclusive (% of busy):\n${top(inclusive, focus.length, busy)}\n`);
  if (callersOf)
    console.log(
      `${callersOf}, by the nearest caller of API or Mastra memory/storage (% of busy):\n${top(callers, count, busy)}`,
    );
}

main();
