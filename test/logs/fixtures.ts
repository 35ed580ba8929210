import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../helpers/fixtures.js';

export { FIXTURES };

/** A real log under ../shared/fixtures (see its README), by path relative to the fixtures root. */
export function fixture(relativePath: string): string {
  return join(FIXTURES, relativePath);
}

/** The file's lines (without a trailing empty one), for `grep -c`-style cross-checks. */
export function fixtureLines(relativePath: string): string[] {
  const lines = readFileSync(fixture(relativePath), 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
