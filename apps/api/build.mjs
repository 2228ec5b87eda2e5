// Builds the API into dist/main.mjs for `pnpm start`: no TypeScript compiler at run time, which
// starts faster and keeps less in memory than `tsx` (which `dev` keeps). What main.ts imports
// dynamically becomes a chunk of its own beside it (code splitting), so the supervisor of several
// API processes loads only its own code, not the API's.
// Our own code and the workspace packages (@chat/*, TypeScript sources) are bundled; every other
// package stays an import from node_modules.
import { rm } from 'node:fs/promises';
import { dirname, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
// `--outdir=DIR` builds elsewhere (the bundle's test builds into a temporary folder).
const outdirArgument = process.argv.find((argument) => argument.startsWith('--outdir='));
const outdir = outdirArgument ? resolvePath(outdirArgument.slice('--outdir='.length)) : `${root}/dist`;

/** Bare imports of third-party packages stay imports; @chat/* and relative paths are bundled. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@chat/') ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * A bundled module keeps its own `import.meta.url` (config.ts finds the repository root by it, the
 * database package its migrations): rewritten relative to the bundle, so the build can move with
 * the repository.
 */
const ownModuleUrls = {
  name: 'own-module-urls',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url') || args.path.includes('/node_modules/')) return undefined;
      const path = relative(outdir, args.path);
      return {
        contents: source.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(path)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

// Chunks of an earlier build are never loaded again; they go so the folder holds one build.
await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: [`${root}/src/main.ts`],
  outdir,
  // Chunks sit beside main.mjs, not in a folder of their own: a bundled module's rewritten
  // `import.meta.url` (above) is relative to the folder of the file it ends up in.
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  sourcemap: 'linked',
  plugins: [externalPackages, ownModuleUrls],
  logLevel: 'warning',
});
