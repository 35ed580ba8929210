import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { summarizeExport } from '../../src/summary/runSummary.js';
import { toJson } from '../../reports/json.js';
import { crossRankFromExports } from '../../src/ranks/ranksFromExports.js';
import { crossRankView, type CrossRankView } from '../../src/ranks/crossRank.js';
import { mergeSummaryFiles } from '../../src/ranks/merge.js';
import { fixture } from '../helpers/fixtures.js';

const rank0 = fixture('pytorch-tp2', 'trace.rank0.sqlite');
const rank1 = fixture('pytorch-tp2', 'trace.rank1.sqlite');
const ITERS = Array.from({ length: 40 }, (_, i) => 30 + i);

describe('cross-rank view on pytorch-tp2 (acceptance)', () => {
  let view: CrossRankView;
  beforeAll(async () => {
    view = await crossRankFromExports([rank0, rank1]);
  });

  it('aligns both ranks\' iterations 30..69 by iteration number, ranks from the file names', () => {
    expect(view.rankSource).toBe('file-name');
    expect(view.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(view.ranks.map((r) => r.file)).toEqual([rank0, rank1]);
    expect(view.iterations.map((it) => it.iter)).toEqual(ITERS);
    expect(view.iterationsNotOnAllRanks).toEqual([]);
    for (const it of view.iterations) expect(it.ranks.map((c) => c.rank)).toEqual([0, 1]);
  });

  it('puts the ranks on one clock: session UTC starts, collective ends agree within microseconds', () => {
    expect(view.clock.basis).toBe('session-utc');
    expect(view.clock.matchedCollectives).toBe(720);
    // Rank 0's session started ~75.9 ms after rank 1's.
    expect(view.clock.offsetsNs.find((o) => o.rank === 0)!.offsetNs).toBe(75_894_281);
    expect(view.clock.medianEndSkewNs!).toBeLessThan(1_000);
  });

  it('reports per iteration the straggler (latest arrival, measured) and the collective wait; the straggler waits least', () => {
    for (const it of view.iterations) {
      expect(it.stragglerBasis, `iter ${it.iter}`).toBe('arrival');
      expect(it.collectives, `iter ${it.iter}`).toBeGreaterThan(0);
      const s = it.ranks.find((c) => c.rank === it.straggler)!;
      const other = it.ranks.find((c) => c.rank !== it.straggler)!;
      // Measured: the straggler reached the iteration's collectives later (summed lateness).
      expect(s.arrivalLagNs!, `iter ${it.iter}`).toBeGreaterThan(other.arrivalLagNs!);
      // Its wait estimate is the smallest (zero: it is the fastest rank through the collectives).
      expect(s.collectiveWaitNs, `iter ${it.iter}`).toBe(0);
      expect(s.collectiveWaitNs).toBeLessThan(other.collectiveWaitNs);
      // The others' wait is what the straggler's lateness cost them (the same within the end skew).
      expect(Math.abs(other.collectiveWaitNs - (s.arrivalLagNs! - other.arrivalLagNs!)), `iter ${it.iter}`).toBeLessThan(20_000);
    }
    // Both ranks straggle at times: the skew is host-side, not one slow GPU.
    expect(new Set(view.iterations.map((it) => it.straggler))).toEqual(new Set([0, 1]));
    expect(view.notes.join('\n')).not.toMatch(/latest-arriving rank is not/);
  });

  it('splits kernel time into communication and compute, and busy time into min / max / spread', () => {
    for (const it of view.iterations) {
      for (const c of it.ranks) {
        expect(c.communicationNs).toBeGreaterThan(0);
        expect(c.computeNs).toBe(c.kernelNs - c.communicationNs);
        expect(c.collectiveWaitNs).toBe(c.communicationNs - it.communicationMinNs);
      }
      expect(it.gpuBusyMinNs).toBe(Math.min(...it.ranks.map((c) => c.gpuBusyNs)));
      expect(it.gpuBusyMaxNs).toBe(Math.max(...it.ranks.map((c) => c.gpuBusyNs)));
      expect(it.gpuBusySpreadNs).toBe(it.gpuBusyMaxNs - it.gpuBusyMinNs);
      expect(it.totalCollectiveWaitNs).toBe(it.ranks.reduce((a, c) => a + c.collectiveWaitNs, 0));
    }
    // Iteration 30 (first after the profiler start): rank 1 waits ~45.8 ms for rank 0.
    const first = view.iterations[0];
    expect(first.straggler).toBe(0);
    expect(first.ranks[1].collectiveWaitNs).toBe(45_808_388);
    // The same model shard on both ranks: compute time agrees within 1%.
    for (const it of view.iterations) expect(Math.abs(it.ranks[0].computeNs - it.ranks[1].computeNs)).toBeLessThan(it.ranks[0].computeNs * 0.01);
  });

  it('merge of the two ranks\' summaries gives the same view (no arrival timestamps in summaries)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-merge-'));
    const files = [rank0, rank1].map((f, r) => {
      const out = join(dir, `summary.rank${r}.json`);
      writeFileSync(out, toJson(withExport(f, (h) => summarizeExport(h))));
      return out;
    });
    const merged = mergeSummaryFiles([...files].reverse());
    expect(merged.rankSource).toBe('file-name');
    expect(merged.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(merged.clock.basis).toBe('none');
    const strip = (v: CrossRankView) => ({
      iterations: v.iterations.map((it) => ({ ...it, stragglerBasis: undefined, collectives: undefined, ranks: it.ranks.map((c) => ({ ...c, arrivalLagNs: undefined })) })),
      ranks: v.ranks.map((r) => ({ ...r, file: undefined, pid: undefined, source: undefined })),
      iterationsNotOnAllRanks: v.iterationsNotOnAllRanks,
      communicationCategory: v.communicationCategory,
    });
    expect(strip(merged)).toEqual(strip(view));
    for (const it of merged.iterations) {
      expect(it.stragglerBasis).toBe('collective-time');
      for (const c of it.ranks) expect(c.arrivalLagNs).toBeNull();
    }
  });
});

describe('crossRankView (synthetic)', () => {
  const fig = (iters: number[], comm: number[], kernel = 1000) => ({
    file: 'x',
    source: 'summary' as const,
    sessionStartUtcNs: null,
    communicationCategory: 'communication',
    pid: null,
    iterations: iters.map((iter, i) => ({ iter, wallNs: 2000, gpuBusyNs: kernel, kernelNs: kernel, communicationNs: comm[i] })),
    collectives: null,
    notes: [],
  });

  it('keeps only iterations on every rank and says which were left out', () => {
    const v = crossRankView([
      { rank: 1, figures: fig([1, 2, 3], [10, 20, 30]) },
      { rank: 0, figures: fig([2, 3, 4], [5, 50, 0]) },
    ]);
    expect(v.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(v.iterations.map((it) => it.iter)).toEqual([2, 3]);
    expect(v.iterationsNotOnAllRanks).toEqual([1, 4]);
    expect(v.iterations[0].straggler).toBe(0); // least collective time
    expect(v.iterations[1].straggler).toBe(1);
    expect(v.iterations[1].ranks.map((c) => c.collectiveWaitNs)).toEqual([20, 0]);
  });

  it('without collectives the straggler is the rank with the most compute', () => {
    const v = crossRankView([
      { rank: 0, figures: fig([1], [0], 900) },
      { rank: 1, figures: fig([1], [0], 1200) },
    ]);
    expect(v.iterations[0].stragglerBasis).toBe('compute');
    expect(v.iterations[0].straggler).toBe(1);
    expect(v.iterations[0].maxCollectiveWaitNs).toBe(0);
  });

  it('re-aligns clocks on collective ends when session clocks disagree', () => {
    // Rank 1's clock is 5 ms off; it arrives 100 ns late at each collective; ends coincide.
    const mk = (arrive: number, utc: bigint) => ({
      ...fig([7], [0]),
      source: 'export' as const,
      sessionStartUtcNs: utc,
      iterations: [{ iter: 7, wallNs: 10_000, gpuBusyNs: 5000, kernelNs: 5000, communicationNs: 2 * (1000 - arrive) }],
      collectives: { offsets: Int32Array.from([0, 2]), startNs: Float64Array.from([arrive, 2000 + arrive]), endNs: Float64Array.from([1000, 3000]) },
    });
    const a = mk(0, 1_000_000_000_000n);
    const b = mk(100, 1_000_000_000_000n);
    b.collectives.startNs = b.collectives.startNs.map((x) => x + 5_000_000);
    b.collectives.endNs = b.collectives.endNs.map((x) => x + 5_000_000);
    const v = crossRankView([
      { rank: 0, figures: a },
      { rank: 1, figures: b },
    ]);
    expect(v.clock.basis).toBe('collective-ends');
    expect(v.clock.medianEndSkewNs).toBe(0);
    expect(v.iterations[0].straggler).toBe(1);
    expect(v.iterations[0].ranks.map((c) => c.arrivalLagNs)).toEqual([0, 200]);
    expect(v.iterations[0].ranks.map((c) => c.collectiveWaitNs)).toEqual([200, 0]);
  });
});
