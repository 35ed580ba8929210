import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Set (to true) only inside the single-file CLI bundle `dist/iterscope.mjs`, by the bundler's
 * `define` (scripts/bundle.mjs); an undeclared global everywhere else.
 */
declare const ITERSCOPE_BUNDLE: boolean | undefined;

/**
 * The file of an entry that runs in its own thread or process (a worker, the Kineto converter):
 * - inside the CLI bundle (`dist/iterscope.mjs`, where this module's URL is the bundle's), the
 *   bundled entry beside the bundle (`bundled`, e.g. `iterscope-worker.mjs`, scripts/bundle.mjs);
 * - from the build (`dist/src/builtEntry.js`), the compiled entry under dist/ (`built`, e.g.
 *   `src/ranks/worker.js`);
 * - from the TypeScript source (vitest), the same compiled entry: Node cannot start a `.ts` file
 *   in a worker or child (`npm test` builds first).
 */
export function builtEntry(bundled: string, built: string): string {
  const here = fileURLToPath(import.meta.url);
  if (typeof ITERSCOPE_BUNDLE !== 'undefined' && ITERSCOPE_BUNDLE) return join(dirname(here), bundled);
  // dist/src/builtEntry.js -> dist/; src/builtEntry.ts -> the repository (its dist/ holds the build).
  const up = resolve(dirname(here), '..');
  const file = here.endsWith('.ts') ? join(up, 'dist', built) : join(up, built);
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run build)`);
  return file;
}
