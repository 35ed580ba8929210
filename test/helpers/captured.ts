import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FIXTURES, REPO_ROOT } from './fixtures.js';

/**
 * Fixtures this project captured itself (`test/fixtures-captured/README.md`: how each was made),
 * kept gzipped in git. A file is unpacked once into `test-artifacts/captured/` (ignored), written
 * to a temporary name and renamed, so parallel test files never read half a file. Where
 * `../shared/fixtures` holds the same folder, that copy is used.
 */
export const CAPTURED = join(REPO_ROOT, 'test', 'fixtures-captured');
const UNPACKED = join(REPO_ROOT, 'test-artifacts', 'captured');

/** Where `name/file` is: shared/fixtures' copy, else the unpacked copy of ours; null when neither exists. */
function locate(name: string, file: string): string | null {
  const shared = join(FIXTURES, name, file);
  if (existsSync(shared)) return shared;
  const plain = join(CAPTURED, name, file);
  if (existsSync(plain)) return plain;
  const packed = `${plain}.gz`;
  if (!existsSync(packed)) return null;
  const out = join(UNPACKED, name, file);
  if (!existsSync(out)) {
    mkdirSync(dirname(out), { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, gunzipSync(readFileSync(packed)));
    renameSync(tmp, out);
  }
  return out;
}

/** Whether a captured fixture's file is here (tests skip with `CAPTURED_SKIP_REASON` when not). */
export function hasCaptured(name: string, file = 'trace.sqlite'): boolean {
  return locate(name, file) !== null;
}

/** Path of a captured fixture's file, unpacked; throws when it is missing. */
export function captured(name: string, ...parts: string[]): string {
  const file = join(...parts);
  const p = locate(name, file);
  if (!p) throw new Error(`captured fixture missing: ${name}/${file} (see test/fixtures-captured/README.md)`);
  return p;
}

export const CAPTURED_SKIP_REASON = 'captured fixture not present (test/fixtures-captured/README.md says how to make it)';

/**
 * Path of a captured fixture's file for the layer tests, with `missing`: why it is not there
 * (tests `it.skipIf(!!missing)` and print it).
 */
export function capturedFixture(name: string, file = 'trace.sqlite'): { path: string; missing: string | null } {
  const p = locate(name, file);
  return p ? { path: p, missing: null } : { path: join(CAPTURED, name, file), missing: `${name}/${file}: ${CAPTURED_SKIP_REASON}` };
}
