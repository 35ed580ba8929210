/**
 * Issue 29, item 2: an iteration log in which every iteration appears twice (two runs appended to
 * one file). Iterations whose records differ in the batch composition are not joined (which one
 * is of this capture cannot be told), with one note naming the log and the iterations; those whose
 * records agree on the batch are joined to the last record, with a note saying so; a log repeated
 * as it is joins as the log itself. On pytorch-dense's iteration_log.txt, with the NVTX side on
 * this thread and in the worker thread.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import type { IterationLogRecord } from '../../src/logs/logRecords.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const LOG = fixture('pytorch-dense', 'iteration_log.txt');
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-repeatedlog-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');
/** A second run: iteration i has the record of the first run's iteration i + 7 (mod 120). */
const secondRun = lines.map((_, i) => lines[(i + 7) % lines.length].replace(/'iter': \d+/, `'iter': ${i}`));
const write = (name: string, text: string[]) => {
  const path = join(tmp, name);
  writeFileSync(path, text.join('\n') + '\n');
  return path;
};
const TWO_RUNS = write('two-runs.txt', [...lines, ...secondRun]);
const REPEATED = write('repeated.txt', [...lines, ...lines]);

function iterations(logFile: string, nvtxRead: 'inline' | 'background'): IterationAnalysis {
  return withExport(DENSE, (h) => analyzeExport(h, { parts: ['iterations', 'nvtx'], logs: [parseIterationLogFile(logFile)], nvtxRead }).iterations!);
}

const batch = (r: IterationLogRecord) => [r.contextRequests, r.contextTokens, r.generationRequests, r.generationTokens].join();
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe.each(['inline', 'background'] as const)('NVTX read %s', (nvtxRead) => {
  const first = parseIterationLogFile(LOG).records;
  // The oracle: iteration i's two records differ in the batch when records i and i + 7 of the first run do.
  const differ = range(120).filter((i) => batch(first[i]) !== batch(first[(i + 7) % 120]));

  it('two runs appended: iterations whose records differ in the batch are not joined, with one note naming the log and them', () => {
    expect(differ.length).toBeGreaterThan(20);
    const a = iterations(TWO_RUNS, nvtxRead);
    const notes = a.coverage.notes.filter((n) => n.startsWith(`${TWO_RUNS}: iterations`));
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/differ in values other than the batch .*: the last record of each was joined$/);
    expect(notes[1]).toMatch(/each appear in records with different batch compositions \(two runs appended to one file\?\): not joined, as which record is of this capture cannot be told$/);
    const unjoined = a.iterations.filter((r) => !r.matched).map((r) => r.iter);
    expect(unjoined).toEqual(differ);
    expect(a.coverage.joined).toBe(120 - differ.length);
    for (const r of a.iterations) {
      // Refused: the counts are the NVTX label's; joined: the second run's record (the file's later line).
      if (!r.matched) expect(r.contextRequests).toBe(r.labelCounts!.contextRequests);
      else expect(r.log!.sources[0].line).toBeGreaterThan(120);
    }
  });

  it('a log repeated as it is: every iteration joined, no note about repeated records', () => {
    const a = iterations(REPEATED, nvtxRead);
    const once = iterations(LOG, nvtxRead);
    expect(a.coverage.joined).toBe(120);
    expect(a.coverage.notes.filter((n) => n.includes('appear in records'))).toEqual([]);
    expect(a.iterations.map((r) => [r.contextRequests, r.contextTokens, r.generationRequests, r.generationTokens])).toEqual(
      once.iterations.map((r) => [r.contextRequests, r.contextTokens, r.generationRequests, r.generationTokens]),
    );
  });
});
