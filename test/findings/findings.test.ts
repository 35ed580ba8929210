import BetterSqlite3 from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runFindings } from '../../src/cli/commands/findings.js';
import { withExport } from '../../src/export/openExport.js';
import { findFindings, resolveThresholds } from '../../src/findings/findFindings.js';
import { FINDINGS_SCHEMA, type Finding, type FindingsResult } from '../../src/findings/finding.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { reportAnalysis } from '../helpers/pipeline.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import { IterscopeError } from '../../src/errors.js';
import { fixture } from '../helpers/fixtures.js';

const byId = (r: FindingsResult, id: string): Finding => {
  const f = r.findings.find((x) => x.id === id);
  if (!f) throw new Error(`no finding ${id} in ${r.findings.map((x) => x.id).join(', ')}`);
  return f;
};

/** Every finding: evidence, a remedy, an estimate within what it rests on, ranked by recoverable time. */
function expectWellFormed(r: FindingsResult): void {
  expect(r.schema).toBe(FINDINGS_SCHEMA);
  expect(r.findings.length).toBeGreaterThan(0);
  for (const f of r.findings) {
    expect(f.evidence.length, f.id).toBeGreaterThan(0);
    expect(f.remedy.length, f.id).toBeGreaterThan(20);
    expect(f.estimate.length, f.id).toBeGreaterThan(10);
    expect(f.recoverableNs, f.id).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(f.recoverableNs), f.id).toBe(true);
    expect(f.recoverableNs, f.id).toBeLessThanOrEqual(f.restsOnNs);
    if (f.recoverableShare !== null) expect(f.recoverableShare).toBeCloseTo(f.recoverableNs / r.basis.wallNs, 12);
  }
  for (let i = 1; i < r.findings.length; i++) expect(r.findings[i].recoverableNs).toBeLessThanOrEqual(r.findings[i - 1].recoverableNs);
}

/** Length of the intersection of two interval lists (naive, independent of src/analysis/intervals). */
function naiveOverlap(a: [number, number][], b: [number, number][]): number {
  // Union each side first, by sorting and merging.
  const merge = (l: [number, number][]) => {
    const s = [...l].sort((x, y) => x[0] - y[0]);
    const out: [number, number][] = [];
    for (const [x, y] of s) {
      const last = out[out.length - 1];
      if (last && x <= last[1]) last[1] = Math.max(last[1], y);
      else out.push([x, y]);
    }
    return out;
  };
  let t = 0;
  for (const [x, y] of merge(a)) for (const [u, v] of merge(b)) t += Math.max(0, Math.min(y, v) - Math.max(x, u));
  return t;
}

describe('findings on pytorch-moe-window (GC and GIL traced)', () => {
  const file = fixture('pytorch-moe-window', 'trace.sqlite');
  let data: ReportData;
  let result: FindingsResult;
  beforeAll(() => {
    const logs = [parseIterationLogFile(fixture('pytorch-moe-window', 'iteration_log.txt')), parseIterationLogFile(fixture('pytorch-moe-window', 'executor.log'))];
    data = withExport(file, (h) => reportAnalysis(h, { logs }));
    result = findFindings(data);
  });

  it('is well formed: evidence, remedy, recoverable time within the idle time it rests on, ranked', () => {
    expectWellFormed(result);
    expect(result.engine).toBe('tensorrt-llm');
    expect(result.basis.iterations).toBe(50);
  });

  it('cites iteration 107 and its 88 ms GC pause', () => {
    const gc = byId(result, 'gc-pauses');
    const db = new BetterSqlite3(file, { readonly: true });
    const longest = db
      .prepare("SELECT n.start AS start, n.\"end\" - n.start AS d FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE coalesce(s.value, n.text) = 'Python GC' ORDER BY d DESC LIMIT 1")
      .get() as { start: number; d: number };
    db.close();
    const top = gc.evidence[0];
    expect(top.iter).toBe(107);
    // The gap holds the longest collection, and the finding counts that collection's time in it.
    expect(top.startNs!).toBeLessThanOrEqual(longest.start);
    expect(top.startNs! + top.durationNs!).toBeGreaterThanOrEqual(longest.start + longest.d);
    expect(top.durationNs!).toBeGreaterThan(88e6);
    expect(top.durationNs!).toBeLessThan(88.2e6);
    expect(top.valueNs!).toBeLessThanOrEqual(longest.d);
    expect(top.valueNs!).toBeGreaterThan(longest.d * 0.99);
    expect(gc.title).toContain('iteration 107');
    expect(gc.restsOnNs).toBe(data.gaps.iterations.reduce((a, i) => a + (i.idleByCauseNs.gc ?? 0), 0));
    expect(gc.remedy).toContain('garbage_collection_gen0_threshold');
    expect(gc.remedy).toContain('gc.freeze()');
  });

  it('names thread 674, not the executor thread 649, as the GIL holder', () => {
    const gil = byId(result, 'gil-contention');
    expect(gil.title).toMatch(/^GIL contention: thread 674 \(python3\) held the GIL during \d+\.\d% of executor thread 649's GIL waits/);
    const holders = data.gilHolders[0];
    expect(holders.executorTid).toBe(649);
    expect(holders.holders.map((h) => h.tid)).toEqual([674]);
    // Independent check of the overlap: raw NVTX rows, naive interval math.
    const db = new BetterSqlite3(file, { readonly: true });
    const rows = (value: string, tid: number) =>
      (db
        .prepare('SELECT n.start AS s, n."end" AS e FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE coalesce(s.value, n.text) = ? AND (n.globalTid & 16777215) = ?')
        .all(value, tid) as { s: number; e: number }[]).map((r) => [r.s, r.e] as [number, number]);
    const waits = rows('Waiting for GIL', 649);
    const holds = rows('Holding GIL', 674);
    db.close();
    const overlap = naiveOverlap(waits, holds);
    expect(holders.holders[0].heldDuringWaitsNs).toBe(overlap);
    expect(holders.waitNs).toBe(naiveOverlap(waits, waits));
    expect(holders.holders[0].shareOfWaits).toBeCloseTo(overlap / holders.waitNs, 12);
    expect(holders.holders[0].shareOfWaits).toBeGreaterThan(0.9);
    expect(gil.evidence[0].tid).toBe(674);
    expect(gil.restsOnNs).toBe(data.gaps.iterations.reduce((a, i) => a + (i.idleByCauseNs.gil_wait ?? 0), 0));
  });

  it('reads memcpy kinds: every host-to-device copy here is from pageable memory', () => {
    const db = new BetterSqlite3(file, { readonly: true });
    const h2d = db.prepare('SELECT count(*) AS n, sum(bytes) AS b FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 0').get() as { n: number; b: number };
    db.close();
    const dir = data.memory.byDirection.find((d) => d.direction === 'Host-to-Device')!;
    expect(dir.pageableCopies).toBe(h2d.n);
    expect(dir.pageableBytes).toBe(h2d.b);
    expect(byId(result, 'memcpy-pageable').evidence[0].text).toMatch(/^Host-to-Device: \d+ pageable copies/);
  });

  it('states its thresholds and honours overrides', () => {
    expect(result.thresholds.minIdleShare).toBe(0.005);
    const strict = findFindings(data, { thresholds: { minIdleShare: 0.5, minGapNs: 1e12, fragmentedIdleShare: 0.9, shortKernelShare: 0.9 } });
    expect(strict.findings.map((f) => f.id)).not.toContain('gc-pauses');
    expect(strict.findings.map((f) => f.id)).not.toContain('gil-contention');
    expect(strict.thresholds.minIdleShare).toBe(0.5);
    expect(() => resolveThresholds({ nope: 1 } as never)).toThrow(IterscopeError);
    expect(() => resolveThresholds({ outlierFactor: -1 })).toThrow(/non-negative/);
  });
});

describe('findings on fieldguide-vllm (no GC/GIL trace, --cuda-memory-usage)', () => {
  const file = fixture('fieldguide-vllm', 'trace.sqlite');
  let result: FindingsResult;
  beforeAll(async () => {
    result = await runFindings([file], { iterationRange: '/^execute_context/', firstIter: 0 });
  });

  it('claims no GC or GIL finding and says both were not traced', () => {
    expectWellFormed(result);
    const ids = result.findings.map((f) => f.id);
    expect(ids).not.toContain('gc-pauses');
    expect(ids).not.toContain('gil-contention');
    const cov = byId(result, 'coverage');
    expect(cov.evidence.some((e) => /^Python GC .* was not traced: this hides GC pauses/.test(e.text))).toBe(true);
    expect(cov.evidence.some((e) => /^the GIL .* was not traced/.test(e.text))).toBe(true);
    expect(cov.confidence.level).toBe('not-traced');
    expect(cov.recoverableNs).toBe(0);
  });

  it('reads CUDA_GPU_MEMORY_USAGE_EVENTS for allocations inside the loop', () => {
    const db = new BetterSqlite3(file, { readonly: true });
    const all = (db.prepare('SELECT count(*) AS n FROM CUDA_GPU_MEMORY_USAGE_EVENTS').get() as { n: number }).n;
    const nonStatic = (db.prepare('SELECT count(*) AS n FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 0 AND memKind NOT IN (5, 6)').get() as { n: number }).n;
    db.close();
    const mem = byId(result, 'allocations-in-loop');
    expect(mem.evidence[0].text).toContain(`CUDA_GPU_MEMORY_USAGE_EVENTS: ${all} events, ${nonStatic} allocations of non-static memory`);
    expect(mem.evidence.slice(1).every((e) => e.startNs !== undefined && e.iter !== undefined)).toBe(true);
    expect(mem.confidence.traced.join(' ')).toContain('--cuda-memory-usage');
  });
});

describe('findings on fieldguide-vllm without iteration windows', () => {
  it('places allocations by the GPU activity span and says the loop is not delimited', async () => {
    const file = fixture('fieldguide-vllm', 'trace.sqlite');
    const result = await runFindings([file]);
    expect(result.basis.wallSource).toBe('gpu-span');
    const db = new BetterSqlite3(file, { readonly: true });
    const span = db
      .prepare(
        `SELECT min(s) AS s, max(e) AS e FROM (SELECT start AS s, "end" AS e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET)`,
      )
      .get() as { s: number; e: number };
    const n = (db.prepare('SELECT count(*) AS n FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 0 AND memKind NOT IN (5, 6) AND start >= ? AND start < ?').get(span.s, span.e) as { n: number }).n;
    db.close();
    const mem = byId(result, 'allocations-in-loop');
    expect(mem.title).toBe(`Memory: ${n} device memory allocations while the GPU was running (no iteration windows)`);
    expect(mem.confidence.level).toBe('inferred');
    expect(byId(result, 'coverage').evidence.some((e) => e.text.startsWith('iteration ranges were not found'))).toBe(true);
  });
});

describe('findings on pytorch-tp2 (both ranks)', () => {
  let result: FindingsResult;
  beforeAll(async () => {
    result = await runFindings([fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')], {
      log: [fixture('pytorch-tp2', 'iteration_log.rank0.txt')],
    });
  });

  it('names the rank the others waited for in collectives', () => {
    expectWellFormed(result);
    const s = byId(result, 'stragglers');
    // The rank whose lateness cost the most: every rank's evidence line carries what the others waited for it.
    const perRank = s.evidence.filter((e) => e.rank !== undefined && e.iter === undefined);
    expect(perRank.map((e) => e.rank)).toEqual([0, 1]);
    const worst = [...perRank].sort((a, b) => b.valueNs! - a.valueNs!)[0];
    expect(s.title).toMatch(new RegExp(`^Straggler: rank ${worst.rank} made the other ranks wait`));
    expect(s.recoverableNs).toBe(worst.valueNs);
    // What the others waited for one rank is what they measured as their own collective wait.
    expect(perRank[0].valueNs! + perRank[1].valueNs!).toBe(s.restsOnNs);
    expect(s.evidence.find((e) => e.iter !== undefined)!.rank).toBe(worst.rank);
  });
});
