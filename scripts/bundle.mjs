#!/usr/bin/env node
/**
 * Bundles the CLI into one ES module, `dist/iterscope.mjs` (package.json `bin`), so `iterscope`
 * starts by loading one file instead of ~630 (our dist/, kysely, arquero, commander...): about
 * 0.25 s instead of 0.6-0.75 s for `--version`, paid by every command.
 *
 * Reads the tsc output (run `tsc -p tsconfig.json` first; `npm run build` does both). Four
 * entries, each self-contained (no shared chunks), written beside each other in dist/:
 * - dist/iterscope.mjs          the CLI (dist/src/cli/main.js);
 * - dist/iterscope-worker.mjs   the worker thread of the multi-export pool (src/ranks/worker.ts),
 *                               started by src/ranks/pool.ts's workerEntry();
 * - dist/iterscope-kineto.mjs   the child process converting Kineto traces
 *                               (src/export/kineto/convertMain.ts), run by src/export/kineto/convertSync.ts;
 * - dist/iterscope-nvtx.mjs     the worker thread reading NVTX beside the GPU ops and computing
 *                               the parts built from it (src/pipeline/backgroundWorker.ts over
 *                               src/load/nvtxWorker.ts, nvtxInBackground.ts).
 * And the library, what `import ... from 'iterscope'` and `'iterscope/queries'` load (package.json
 * `exports`): `dist/iterscope-lib.mjs` and `dist/iterscope-queries.mjs`, sharing their common code
 * through `dist/iterscope-chunk-*.mjs` (one copy of each module in a process that imports both).
 * Loading the ~630 modules of dist/src, kysely and arquero one by one cost a library user ~0.75 s
 * of start-up per process, the bundle ~0.2 s, as for the CLI.
 * `ITERSCOPE_BUNDLE` is defined as true so src/builtEntry.ts finds the bundled entries beside
 * the bundle (inside it, import.meta.url is the bundle's URL, not theirs: every output file,
 * chunks included, is written to dist/ itself).
 *
 * Left out of the bundle and loaded from node_modules at run time:
 * - better-sqlite3 (a native addon: it locates its .node file from its own directory);
 * - vega and vega-lite (only the HTML report's charts import them, lazily: bundling them would
 *   make every command parse ~2 MB it does not run).
 * Bundled CommonJS packages (commander, cli-table3...) `require` Node built-ins: the banner gives
 * the ES module a real `require`.
 *
 *   node scripts/bundle.mjs [--metafile]   (--metafile: also write dist/iterscope.meta.json)
 */
import { build } from 'esbuild';
import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(REPO, 'dist');

const ENTRIES = {
  iterscope: join(DIST, 'src', 'cli', 'main.js'),
  'iterscope-worker': join(DIST, 'src', 'ranks', 'worker.js'),
  'iterscope-kineto': join(DIST, 'src', 'export', 'kineto', 'convertMain.js'),
  'iterscope-nvtx': join(DIST, 'src', 'pipeline', 'backgroundWorker.js'),
};
/** The library entries (package.json `exports`), bundled with shared chunks. */
const LIBRARY_ENTRIES = {
  'iterscope-lib': join(DIST, 'src', 'index.js'),
  'iterscope-queries': join(DIST, 'queries', 'index.js'),
};
for (const file of [...Object.values(ENTRIES), ...Object.values(LIBRARY_ENTRIES)]) {
  if (!existsSync(file)) {
    process.stderr.write(`bundle: ${file} is missing: run tsc -p tsconfig.json first (npm run build does both)\n`);
    process.exit(1);
  }
}

export const EXTERNAL = ['better-sqlite3', 'vega', 'vega-lite'];

/** What every bundle shares: ES modules for Node 20, the natives and charts left out. */
const COMMON = {
  outdir: DIST,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  define: { ITERSCOPE_BUNDLE: 'true' },
  banner: { js: "import { createRequire as __iterscopeCreateRequire } from 'node:module'; const require = __iterscopeCreateRequire(import.meta.url);" },
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
};

// Chunks of an earlier build (their names are content hashes) would otherwise pile up in dist/.
for (const f of readdirSync(DIST)) if (/^iterscope-chunk-.*\.mjs$/.test(f)) rmSync(join(DIST, f));
const result = await build({ ...COMMON, entryPoints: ENTRIES, splitting: false });
const library = await build({ ...COMMON, entryPoints: LIBRARY_ENTRIES, splitting: true, chunkNames: 'iterscope-chunk-[hash]' });

const cli = join(DIST, 'iterscope.mjs');
chmodSync(cli, 0o755);
if (process.argv.includes('--metafile')) writeFileSync(join(DIST, 'iterscope.meta.json'), JSON.stringify(result.metafile));
const sizes = Object.entries({ ...result.metafile.outputs, ...library.metafile.outputs })
  .map(([file, o]) => `${file.replace(/^.*\//, '')} ${(o.bytes / 1024 / 1024).toFixed(2)} MB`)
  .join(', ');
process.stdout.write(`bundle: ${sizes}\n`);
