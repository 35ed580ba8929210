import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseIterationLogLine, type IterationLogRecord } from '../../src/logs/index.js';
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

/** The one record a log line gives (the test fails when it gives none or several). */
export function onlyRecord(line: string, lineNo?: number, file?: string): IterationLogRecord {
  const result = parseIterationLogLine(line, lineNo, file);
  if (result.kind !== 'records') throw new Error(`not a record: ${JSON.stringify(result)}`);
  expect(result.records).toHaveLength(1);
  return result.records[0];
}
