/**
 * Issue 31, leaner nsys exports: a kernel table without `globalPid`. With one process calling the
 * CUDA API, the correlation id alone joins a kernel to its launch, so every analysis gives what
 * the full export gives, plus one note; with several processes the join is ambiguous and the
 * export is refused. The copies are made from the fixtures' real DDL (hostileExport.ts: the table
 * recreated without the column, its rows copied across), never by hand-written tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeExport, withExport, SchemaError, REPORT_PARTS, parseIterationLogFile, type ExportAnalysis } from '../../src/index.js';
import { setExcludedRowSink } from '../../src/export/excludedRows.js';
import { copyExport, dropColumn, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const K = 'CUPTI_ACTIVITY_KIND_KERNEL';
const dir = mkdtempSync(join(tmpdir(), 'iterscope-globalpid-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withoutGlobalPid(source: string, name: string): string {
  return editExport(copyExport(source, join(dir, name)), (db) => dropColumn(db, K, 'globalPid'));
}

/** The analysis of `path` and the notes said about it. */
function analyzed(path: string, logFile: string): { path: string; a: ExportAnalysis; notes: string[] } {
  const notes: string[] = [];
  setExcludedRowSink((n) => notes.push(n));
  try {
    const logs = [parseIterationLogFile(logFile)];
    const a = withExport(path, (h) => analyzeExport(h, { parts: REPORT_PARTS, logs }));
    return { path, a, notes };
  } finally {
    setExcludedRowSink(null);
  }
}

describe('kernel table without globalPid', () => {
  it('one process (pytorch-dense, CUDA-graph nodes): same kernels, iterations, gaps and NVTX projection as the full export, plus one note', () => {
    const source = fixture('pytorch-dense', 'trace.sqlite');
    const log = fixture('pytorch-dense', 'iteration_log.txt');
    const full = analyzed(source, log);
    const lean = analyzed(withoutGlobalPid(source, 'dense-no-globalpid.sqlite'), log);

    // The parts name their input file and time themselves (`ms`); everything else is equal.
    const plain = (v: unknown, path: string) =>
      JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'ms' ? undefined : ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x)).replaceAll(path, 'INPUT')) as unknown;
    const same = (part: keyof ExportAnalysis) => expect(plain(lean.a[part], lean.path), part).toEqual(plain(full.a[part], full.path));
    for (const part of ['kernels', 'iterations', 'phases', 'gaps', 'projection', 'metrics', 'categories', 'coverage', 'memory', 'findings'] as const) same(part);
    // The fixture's facts, so an empty analysis on both sides cannot pass.
    expect(full.a.kernels!.rows.reduce((n, r) => n + r.count, 0)).toBe(56503);
    expect(full.a.iterations!.iterations).toHaveLength(120);
    expect(full.a.iterations!.iterations.every((r) => r.kernelCount > 0)).toBe(true);

    expect(full.notes).toEqual([]);
    expect(lean.notes).toHaveLength(1);
    expect(lean.notes[0]).toMatch(/: CUPTI_ACTIVITY_KIND_KERNEL has no globalPid column \(an older or minimal export\): one process \(pid \d+\) called the CUDA API, so its rows are taken as that process's and joined to their launch calls by correlation id alone$/);
  });

  it('several processes (two GPUs, two processes): refused, the join would be ambiguous', () => {
    const lean = withoutGlobalPid(fixture('external', 'nsys2026.2_mfu_2gpu_before_nsysai.sqlite'), 'two-processes-no-globalpid.sqlite');
    const run = () => withExport(lean, (h) => analyzeExport(h, { parts: ['kernels'] }));
    expect(run).toThrow(SchemaError);
    expect(run).toThrow(/table CUPTI_ACTIVITY_KIND_KERNEL lacks column globalPid and several processes called the CUDA API: correlation ids are unique per process only, so which call launched a row is ambiguous, needed by/);
  });
});
