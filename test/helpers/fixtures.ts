import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root. */
export const REPO_ROOT = resolve(here, '..', '..');

/** ../shared/fixtures beside the checkout (as in CI). */
export const FIXTURES = resolve(REPO_ROOT, '..', 'shared', 'fixtures');

/** Path of a fixture file, e.g. `fixture('pytorch-dense', 'trace.sqlite')`. */
export function fixture(...parts: string[]): string {
  const p = join(FIXTURES, ...parts);
  if (!existsSync(p)) throw new Error(`fixture missing: ${p} (../shared/fixtures must sit beside the checkout)`);
  return p;
}

/** Every export (`.sqlite`) under `dir`, but pytorch-dense-long's (130 MB: for the bench). */
export function fixtureExports(dir: string = FIXTURES): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'pytorch-dense-long' ? [] : fixtureExports(p);
    return name.endsWith('.sqlite') ? [p] : [];
  });
}

/** The built CLI (npm test builds before running vitest). */
export const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** The bundled CLI (package.json `bin`), what users run. */
export const CLI_BUNDLE = join(REPO_ROOT, 'dist', 'iterscope.mjs');
