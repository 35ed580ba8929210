import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Real logs from /work/shared/fixtures (see its README); override with ITERSCOPE_FIXTURES. */
export const FIXTURES = process.env.ITERSCOPE_FIXTURES ?? '/work/shared/fixtures';

export function fixture(relativePath: string): string {
  return join(FIXTURES, relativePath);
}

/** The file's lines (without a trailing empty one), for `grep -c`-style cross-checks. */
export function fixtureLines(relativePath: string): string[] {
  const lines = readFileSync(fixture(relativePath), 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
