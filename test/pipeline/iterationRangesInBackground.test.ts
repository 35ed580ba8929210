/**
 * Commands that load no NVTX columns (`iterations`, `gaps` with iterations) find the iteration ranges
 * and the gaps' host-cause rows by query. With the NVTX worker in query mode (`BackgroundPlan.columns`
 * false) it reads the API calls (`BackgroundPlan.apiCalls`), then runs those queries on its
 * connection, while this thread reads the GPU ops; the API calls cross back as shared columns, the
 * ranges as plain data (the source by id), the host-cause rows as columns (this thread alone queries
 * only the launching threads' rows). The analysis must be the one this thread finds alone, on every
 * fixture export: ranges found, none found (the fallbacks and the errors stay on this thread), and
 * the user's --iteration-range.
 */
import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openExport, withExport } from '../../src/export/openExport.js';
import { excludedRowNotes } from '../../src/export/excludedRows.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { NvtxWorkerRead } from '../../src/worker/nvtxInBackground.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { DEFAULT_ITERATION_SOURCES, findIterationRangesData } from '../../src/iterations/sources/index.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisPart, AnalysisRequest, NvtxReadMode } from '../../src/pipeline/request.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { fixture, FIXTURES, fixtureExports } from '../helpers/fixtures.js';

/** What `iterscope iterations` asks for. */
const ITERATION_PARTS: AnalysisPart[] = ['iterations', 'gaps', 'metrics', 'pytorchHost'];

/**
 * The analysis without timings, the export's notes, and what the NVTX worker answered with a value
 * (not null: none found): its parts, and `apiCalls` for the API calls it read.
 */
function analyze(file: string, nvtxRead: NvtxReadMode, request: Omit<AnalysisRequest, 'parts'> = {}) {
  return withExport(file, (h) => {
    const taken: string[] = [];
    const proto = LoadedExport.prototype;
    const take = proto.takeBackground;
    proto.takeBackground = function <T>(this: LoadedExport, name: string): T | undefined {
      const v = take.call(this, name) as T | undefined;
      if (v !== undefined && v !== null) taken.push(name);
      return v;
    };
    const workerProto = NvtxWorkerRead.prototype;
    const takeApiCalls = workerProto.takeApiCalls;
    workerProto.takeApiCalls = function <T>(this: NvtxWorkerRead): T | undefined {
      const v = takeApiCalls.call(this) as T | undefined;
      if (v !== undefined) taken.push('apiCalls');
      return v;
    };
    let a: ExportAnalysis;
    try {
      a = analyzeExport(h, { ...request, parts: ITERATION_PARTS, nvtxRead });
    } finally {
      proto.takeBackground = take;
      workerProto.takeApiCalls = takeApiCalls;
    }
    return { analysis: { ...a, timingsMs: {}, metrics: a.metrics && { ...a.metrics, ms: 0 } }, notes: excludedRowNotes(h), taken };
  });
}

describe.each(fixtureExports(FIXTURES).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))('$name', ({ file }) => {
  it('the iteration ranges found by the worker give the analysis found on this thread', () => {
    const inWorker = analyze(file, 'background');
    const here = analyze(file, 'inline');
    expect(inWorker.analysis).toEqual(here.analysis);
    expect(inWorker.notes).toEqual(here.notes);
    // Ranges of a default source come from the worker; none found (or a fallback's), from here.
    const rangesHere = withExport(file, (h) => findIterationRangesData(new LoadedExport(h)));
    expect(inWorker.taken.includes('iterationWindows')).toBe(rangesHere !== null);
    if (rangesHere) expect(DEFAULT_ITERATION_SOURCES.map((s) => s.id)).toContain(rangesHere.sourceId);
    const [hasNvtx, hasRuntime] = withExport(file, (h) => [h.hasTable('NVTX_EVENTS'), h.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')]);
    expect(inWorker.taken.includes('hostCauseRows')).toBe(hasNvtx);
    // The worker reads the API calls whenever it runs ('background': from any count) and they exist.
    expect(inWorker.taken.includes('apiCalls')).toBe(hasNvtx && hasRuntime);
    expect(here.taken).toEqual([]);
  });
});

describe('with logs and an --iteration-range', () => {
  it('pytorch-dense with its log: the worker ranges, joined to the log as on this thread', () => {
    const logs = [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))];
    const inWorker = analyze(fixture('pytorch-dense', 'trace.sqlite'), 'background', { logs });
    // The host-cause rows first: the worker finds the iteration ranges among them (no scan of their own).
    expect(inWorker.taken).toEqual(['apiCalls', 'hostCauseRows', 'iterationWindows']);
    expect(inWorker.analysis.iterations!.iterations.length).toBeGreaterThan(10);
    expect(inWorker.analysis).toEqual(analyze(fixture('pytorch-dense', 'trace.sqlite'), 'inline', { logs }).analysis);
  });

  it.each(['/_forward_step/', 'pytorch'])('vllm-dense and pytorch-dense with --iteration-range %s: the same ranges, or the same error', (arg) => {
    for (const dir of ['pytorch-dense', 'vllm-dense']) {
      const selection = { rangeSpec: parseIterationRangeSpec(arg) };
      const file = fixture(dir, 'trace.sqlite');
      const inWorker = analyze(file, 'background', { selection });
      const here = analyze(file, 'inline', { selection });
      expect(inWorker.analysis, `${dir} ${arg}`).toEqual(here.analysis);
      const rangesHere = withExport(file, (h) => findIterationRangesData(new LoadedExport(h), selection.rangeSpec));
      expect(inWorker.taken.includes('iterationWindows'), `${dir} ${arg}`).toBe(rangesHere !== null);
    }
  });
});

describe('a worker that cannot open the export', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'iterscope-rangesbg-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('leaves the API calls, the ranges and the host-cause rows to this thread at once, with the same analysis', () => {
    // The file is removed once open here: this connection still reads it, the worker's cannot open
    // it. Every step it was given fails (this thread waits on the API calls' step first): none is
    // waited for until the time limit (the test's own timeout is far below it).
    const path = join(tmp, 'gone.sqlite');
    copyFileSync(fixture('pytorch-dense', 'trace.sqlite'), path);
    const h = openExport(path);
    let a: ExportAnalysis;
    let taken: string[];
    try {
      unlinkSync(path);
      const proto = LoadedExport.prototype;
      const take = proto.takeBackground;
      taken = [];
      proto.takeBackground = function <T>(this: LoadedExport, name: string): T | undefined {
        const v = take.call(this, name) as T | undefined;
        if (v !== undefined && v !== null) taken.push(name);
        return v;
      };
      try {
        a = analyzeExport(h, { parts: ITERATION_PARTS, nvtxRead: 'background' });
      } finally {
        proto.takeBackground = take;
      }
    } finally {
      h.close();
    }
    expect(taken).toEqual([]);
    const here = analyze(fixture('pytorch-dense', 'trace.sqlite'), 'inline').analysis;
    const named = (x: object, file: string) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'string' ? v.replaceAll(file, 'FILE') : v));
    expect(named({ ...a, timingsMs: {}, metrics: a.metrics && { ...a.metrics, ms: 0 } }, path)).toEqual(named(here, fixture('pytorch-dense', 'trace.sqlite')));
    expect(a.iterations!.iterations.length).toBeGreaterThan(10);
  });
});
