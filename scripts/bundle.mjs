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
 *                               (src/kineto/convert/convertMain.ts), run by src/kineto/convert/convertSync.ts;
 * - dist/iterscope-nvtx.mjs     the worker thread reading NVTX beside the GPU ops and computing
 *                               the parts built from it (src/worker/backgroundWorker.ts over
 *                               src/worker/nvtxWorker.ts, nvtxInBackground.ts).
 * The CLI and the two workers are bundled as CommonJS scripts (`iterscope.cjs`, ...) that their
 * `.mjs` starts through dist/iterscope-launch.mjs (scripts/launch.mjs) with V8's code cache,
 * which scripts/codeCache.mjs writes last (`<bundle>.cjs[.<flags>].v8cache`): Node 20 caches the code of a
 * script, not of an ES module. Their `import(...)` expressions become `__iterscopeImport(...)`
 * (see launch.mjs's `wrapBundle`) and `import.meta.url` the bundle's own file URL.
 * And the library, what `import ... from 'iterscope'` and `'iterscope/queries'` load (package.json
 * `exports`): `dist/iterscope-lib.mjs` and `dist/iterscope-queries.mjs` re-export, name by name, the
 * `lib` and `queries` of one CommonJS bundle, `dist/iterscope-lib.cjs`, which
 * `dist/iterscope-library.mjs` runs through the launcher with its code cache (once per process: one
 * copy of each module for a program that imports both). Loading the ~630 modules of dist/src,
 * kysely and arquero one by one cost a library user ~0.75 s of start-up per process, the bundle
 * ~40 ms. As an ES module bundle (chunks shared by the two entries, until this change), every
 * function compiled as it first ran: `report` through the library took 1.38-1.46 s, 1.25-1.29 s
 * from the script and its cache.
 * `ITERSCOPE_BUNDLE` is defined as true so src/builtEntry.ts finds the bundled entries beside
 * the bundle (inside it, import.meta.url is the bundle's URL, not theirs: every output file is
 * written to dist/ itself).
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
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadBundle } from './launch.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(REPO, 'dist');

/** The entries started through the launcher with a code cache (CommonJS bundles). */
const CACHED_ENTRIES = {
  iterscope: join(DIST, 'src', 'cli', 'main.js'),
  'iterscope-worker': join(DIST, 'src', 'ranks', 'worker.js'),
  'iterscope-nvtx': join(DIST, 'src', 'worker', 'backgroundWorker.js'),
};
/** The Kineto converter: a child process run once per trace, an ES module as it was. */
const MODULE_ENTRIES = {
  'iterscope-kineto': join(DIST, 'src', 'kineto', 'convert', 'convertMain.js'),
};
const ENTRIES = { ...CACHED_ENTRIES, ...MODULE_ENTRIES };
/**
 * The library entries (package.json `exports`): both re-export, by name, one CommonJS bundle
 * (`iterscope-lib.cjs`, started with its code cache), whose `lib` and `queries` are the two
 * entries' modules.
 */
const LIBRARY_ENTRIES = {
  lib: { esm: 'iterscope-lib', from: join(DIST, 'src', 'index.js') },
  queries: { esm: 'iterscope-queries', from: join(DIST, 'queries', 'index.js') },
};
const LIBRARY_BUNDLE = join(DIST, 'iterscope-lib.cjs');
for (const file of [...Object.values(ENTRIES), ...Object.values(LIBRARY_ENTRIES).map((e) => e.from)]) {
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

// Chunks of an earlier build's library (their names were content hashes) would otherwise stay in dist/.
for (const f of readdirSync(DIST)) if (/^iterscope-chunk-.*\.mjs$/.test(f)) rmSync(join(DIST, f));
/** How a CommonJS bundle is built: strict, as the ES modules it is made of are; `require` is CommonJS's own. */
const SCRIPT = {
  ...COMMON,
  splitting: false,
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  banner: { js: `'use strict'; const __iterscopeUrl = require('node:url').pathToFileURL(__filename).href;` },
  define: { ...COMMON.define, 'import.meta.url': '__iterscopeUrl' },
};
const scripts = await build({ ...SCRIPT, entryPoints: CACHED_ENTRIES });
const modules = await build({ ...COMMON, entryPoints: MODULE_ENTRIES, splitting: false });
// One output file from an in-memory entry (`stdin`): `outfile` in place of `outdir` and its extension.
const { outdir: _outdir, outExtension: _ext, ...libraryOptions } = SCRIPT;
const library = await build({
  ...libraryOptions,
  stdin: {
    contents: Object.entries(LIBRARY_ENTRIES)
      .map(([name, e]) => `export * as ${name} from ${JSON.stringify(`./${relative(DIST, e.from)}`)};\n`)
      .join(''),
    resolveDir: DIST,
    sourcefile: 'iterscope-lib-entry.js',
  },
  outfile: LIBRARY_BUNDLE,
});

copyFileSync(join(REPO, 'scripts', 'launch.mjs'), join(DIST, 'iterscope-launch.mjs'));
for (const name of Object.keys(CACHED_ENTRIES)) {
  const file = join(DIST, `${name}.cjs`);
  writeFileSync(file, scriptText(file, readFileSync(file, 'utf8'), outputOf(scripts.metafile, file)));
  writeFileSync(join(DIST, `${name}.mjs`), launcherText(name));
}
writeFileSync(LIBRARY_BUNDLE, scriptText(LIBRARY_BUNDLE, readFileSync(LIBRARY_BUNDLE, 'utf8'), outputOf(library.metafile, LIBRARY_BUNDLE)));
writeLibraryEntries();
// Caches of an earlier build (scripts/codeCache.mjs writes them anew below).
for (const f of readdirSync(DIST)) if (/^iterscope.*\.cjs\..*v8cache$/.test(f)) rmSync(join(DIST, f));
const cli = join(DIST, 'iterscope.mjs');
chmodSync(cli, 0o755);
// The four entries' metafile, as one build wrote it before the CLI and workers became scripts.
const entriesMeta = { inputs: { ...scripts.metafile.inputs, ...modules.metafile.inputs }, outputs: { ...scripts.metafile.outputs, ...modules.metafile.outputs } };
if (process.argv.includes('--metafile')) writeFileSync(join(DIST, 'iterscope.meta.json'), JSON.stringify(entriesMeta));
const codeCache = spawnSync(process.execPath, [join(REPO, 'scripts', 'codeCache.mjs'), ...Object.keys(CACHED_ENTRIES).map((n) => join(DIST, `${n}.cjs`)), LIBRARY_BUNDLE], {
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
// Without a cache the entries still run (compiled from source): a failure here is a warning.
if (codeCache.status !== 0) process.stderr.write('bundle: no code cache written (scripts/codeCache.mjs failed); the CLI runs without it\n');
const sizes = Object.entries({ ...entriesMeta.outputs, ...library.metafile.outputs })
  .map(([file, o]) => `${file.replace(/^.*\//, '')} ${(o.bytes / 1024 / 1024).toFixed(2)} MB`)
  .join(', ');
process.stdout.write(`bundle: ${sizes}\n${codeCache.stdout ?? ''}`);

/**
 * A CommonJS bundle's text as the launcher compiles it (inside a function: no hashbang line), its
 * `import(...)` expressions calling the launcher's importer (`__iterscopeImport`). esbuild's
 * metafile lists the bundle's dynamic imports: only packages left out (vega, vega-lite) may be
 * among them, and each must be found once in the text; anything else stops the build (it would
 * fail at run time under a code cache).
 */
function scriptText(file, text, output) {
  const dynamic = output.imports.filter((i) => i.kind === 'dynamic-import');
  const unknown = dynamic.filter((i) => !i.external || !EXTERNAL.includes(i.path));
  if (unknown.length > 0) fail(`${file}: import() of ${unknown.map((i) => i.path).join(', ')}: bundle it, or add it to EXTERNAL`);
  let body = text.replace(/^#!.*\n/, '');
  for (const path of new Set(dynamic.map((i) => i.path))) {
    const expected = dynamic.filter((i) => i.path === path).length;
    const call = `import(${JSON.stringify(path)})`;
    const found = body.split(call).length - 1;
    if (found !== expected) fail(`${file}: ${found} ${call} in the text, ${expected} in esbuild's metafile`);
    body = body.replaceAll(call, `__iterscopeImport(${JSON.stringify(path)})`);
  }
  return asciiText(file, body);
}

/**
 * The text with every character past ASCII written as its `\uXXXX` escape. esbuild escapes them in
 * strings and names, not in comments (kysely's examples) or regular expression literals (`µs`),
 * and one such character makes V8 hold the whole 1.9 MB source as a two-byte string: 3.8 MB per
 * thread, decoded from UTF-8 and copied again when the launcher's wrapper is flattened (the CLI's
 * start: 19.3 -> 16.3 ms with an ASCII text). The escape means the same character in a regular
 * expression, a string or a name, and is text in a comment; after a backslash it would not, so a
 * bundle with one there stops the build.
 */
function asciiText(file, text) {
  return text.replace(/[^\x00-\x7f]/g, (c, at) => {
    if (text[at - 1] === '\\') fail(`${file}: a backslash before U+${c.charCodeAt(0).toString(16).padStart(4, '0')} at ${at}: its \\u escape would not mean the same`);
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** esbuild's metafile entry of output `file` (its keys are relative to the working directory). */
function outputOf(metafile, file) {
  const found = Object.entries(metafile.outputs).find(([path]) => resolve(path) === file);
  if (!found) fail(`${file}: not among esbuild's outputs`);
  return found[1];
}

function fail(message) {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
}

/**
 * The library's ES module entries: `iterscope-library.mjs` runs the bundle (once per process, as
 * an ES module is), and each entry re-exports its part by name. The names are the bundle's own,
 * read by running it here.
 */
function writeLibraryEntries() {
  writeFileSync(join(DIST, 'iterscope-library.mjs'), `import { loadBundle } from './iterscope-launch.mjs';\n\nexport default loadBundle(new URL('./${basename(LIBRARY_BUNDLE)}', import.meta.url));\n`);
  const bundle = loadBundle(pathToFileURL(LIBRARY_BUNDLE));
  for (const [name, e] of Object.entries(LIBRARY_ENTRIES)) {
    const names = Object.keys(bundle[name]);
    if (names.length === 0) fail(`${LIBRARY_BUNDLE}: no exports in its ${name}`);
    writeFileSync(join(DIST, `${e.esm}.mjs`), `import bundle from './iterscope-library.mjs';\n\nexport const {\n  ${names.join(',\n  ')},\n} = bundle.${name};\n`);
  }
}

/** The `.mjs` that starts bundle `name` (bin or worker file): the launcher, with its code cache. */
function launcherText(name) {
  return `#!/usr/bin/env node\nimport { runBundle } from './iterscope-launch.mjs';\n\nrunBundle(new URL('./${name}.cjs', import.meta.url));\n`;
}
