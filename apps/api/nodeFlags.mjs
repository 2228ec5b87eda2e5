// The Node flags the built API runs with, wherever it is started: `pnpm start` (package.json),
// scripts/start.mjs, compose.yaml and the benchmark harness. test/nodeFlags.test.ts checks that
// every one of those passes exactly these.
//
// --max-semi-space-size=8: V8 lets the young generation grow to 64 MB per semi-space, and loading
// Mastra (tens of thousands of short-lived objects at start) grows it there, where it stays for the
// life of the process: about 100 MB of the idle resident memory. At 8 MB (16 MB of new space) the
// API idles at about 240 MB instead of 385 MB, for the same CPU per turn within the measurement's
// spread (docs/benchmarks.md): a turn's garbage is short-lived and scavenges stay cheap.
export const API_NODE_FLAGS = ['--max-semi-space-size=8'];
