/**
 * Commands that load no NVTX columns (`iterations`, `gaps` with iterations) find the iteration ranges
 * and the gaps' host-cause rows by query. With the NVTX worker in query mode (`BackgroundPlan.columns`
 * false) those queries run on its connection while this thread reads the GPU ops; the ranges cross
 * back as plain data (the source by id), the host-cause rows as columns (this thread alone queries
 * only the launching threads' rows). The analysis must be the one this thread finds alone, on every
 * fixture export: ranges found, none found (the fallbacks and the errors stay on this thread), and
 * the user's --iteration-range.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { excludedRowNotes } from '../../src/load/excludedRows.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { DEFAULT_ITERATION_SOURCES, findIterationRangesData } from '../../src/iterations/sources/index.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisPart, AnalysisRequest, NvtxReadMode } from '../../src/pipeline/request.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { fixture, FIXTURES, fixtureExports } from '../helpers/fixtures.js';

/** What `iterscope iterations` asks for. */
const ITERATION_PARTS: AnalysisPart[] = ['iterations', 'gaps', 'metrics', 'pytorchHost'];

/** The analysis without timings, the export's notes, and the parts the NVTX worker answered with a value (not null: none found). */
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
    let a: ExportAnalysis;
    try {
      a = analyzeExport(h, { ...request, parts: ITERATION_PARTS, nvtxRead });
    } finally {
      proto.takeBackground = take;
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
    expect(inWorker.taken.includes('hostCauseRows')).toBe(withExport(file, (h) => h.hasTable('NVTX_EVENTS')));
    expect(here.taken).toEqual([]);
  });
});

describe('with logs and an --iteration-range', () => {
  it('pytorch-dense with its log: the worker ranges, joined to the log as on this thread', () => {
    const logs = [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))];
    const inWorker = analyze(fixture('pytorch-dense', 'trace.sqlite'), 'background', { logs });
    expect(inWorker.taken).toEqual(['iterationWindows', 'hostCauseRows']);
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
