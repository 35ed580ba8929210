import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openExport } from '../../src/export/openExport.js';
import type { ExportHandle } from '../../queries/handle.js';
import { analyzeGaps, explainScannedGaps, scanGaps, type GapRow } from '../../src/gaps/analyzeGaps.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture } from '../helpers/fixtures.js';
import { gapsOf } from '../helpers/pipeline.js';

const bounds = (r: GapRow) => [r.deviceId, r.pid, r.startNs, r.endNs, r.before?.name ?? null, r.after?.name ?? null];

// The pipeline scans the gaps (GPU ops and API calls) before the iteration windows and the NVTX side
// are known, and explains them after: the scan is shared, never written.
describe('gaps scanned, then explained (pytorch-dense)', () => {
  let h: ExportHandle;
  beforeAll(() => {
    h = openExport(fixture('pytorch-dense', 'trace.sqlite'));
  });
  afterAll(() => h.close());

  it('one scan explained with the iterations and then without gives what each analysis gives alone', () => {
    const piped = gapsOf(h);
    expect(piped.iterationsFound).toBe(true);
    const loaded = new LoadedExport(h);
    const scan = scanGaps(loaded);
    const its = piped.iterations.map((s) => ({ iter: s.iter, pid: s.pid, startNs: s.startNs, endNs: s.endNs, phase: s.phase }));
    const withIterations = explainScannedGaps(loaded, scan, { iterations: its });
    const without = explainScannedGaps(loaded, scan, { iterations: null });
    expect(withIterations).toEqual(piped);
    expect(without).toEqual(analyzeGaps(new LoadedExport(h), { iterations: null }));
    // The iterations' share of the short gaps is placed in the explanation, not in the scan.
    expect(withIterations.iterations.reduce((a, s) => a + s.fragmentedGaps, 0)).toBeGreaterThan(0);
    expect(scan.devices.map((d) => [d.summary.gaps, d.summary.gapIdleNs, Object.keys(d.summary.idleByCauseNs).length])).toEqual([[0, 0, 0]]);
    // Without --device the scan holds no GPU op columns of its own (they go with the loader's).
    expect(scan.filtered).toBeUndefined();
  });

  it("the explanation reads no API calls: each long gap's launch call is found in the scan, the same as SQL's call of its op after", () => {
    const loaded = new LoadedExport(h);
    const scan = scanGaps(loaded);
    const reads = vi.spyOn(loaded, 'apiCalls');
    const explained = explainScannedGaps(loaded, scan, { iterations: null });
    expect(reads).not.toHaveBeenCalled();
    expect(explained).toEqual(analyzeGaps(new LoadedExport(h), { iterations: null }));
    const withCall = explained.gaps.filter((g) => g.launchCall !== null);
    expect(withCall.length).toBeGreaterThan(50);
    const callOf = h.sqlite.prepare(
      `SELECT r.start AS startNs, r.globalTid & 16777215 AS tid FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
       WHERE r.correlationId = ? AND (r.globalTid >> 24) & 16777215 = ?`,
    );
    for (const g of withCall.slice(0, 50)) {
      const row = callOf.get(g.after!.correlationId, g.pid) as { startNs: number; tid: number };
      expect({ startNs: g.launchCall!.startNs, tid: g.launchCall!.tid }).toEqual(row);
    }
  });
});

describe('--device on a two-GPU export (nsys 2026.2, h100_2gpu)', () => {
  let h: ExportHandle;
  beforeAll(() => {
    h = openExport(fixture('external', 'nsys2026.2_h100_2gpu_1s_nsysai.sqlite'));
  });
  afterAll(() => h.close());

  it("each device's analysis has that device's gaps of the whole one, with the same ops on either side", () => {
    const whole = analyzeGaps(new LoadedExport(h), { minGapNs: 10_000 });
    expect(whole.devices.map((d) => d.deviceId)).toEqual([0, 1]);
    for (const deviceId of [0, 1]) {
      const one = analyzeGaps(new LoadedExport(h), { minGapNs: 10_000, deviceId });
      const mine = whole.gaps.filter((r) => r.deviceId === deviceId);
      expect(mine.length).toBeGreaterThan(0);
      expect(one.gaps.map(bounds)).toEqual(mine.map(bounds));
      const { gaps: _g, gapIdleNs: _i, idleByCauseNs: _c, ...totals } = whole.devices.find((d) => d.deviceId === deviceId)!;
      expect(one.devices).toHaveLength(1);
      expect(one.devices[0]).toMatchObject(totals);
    }
  });

  it("both devices' long gaps, held as columns from the scan to their explanation: by device, then time, each launch call SQL's call of its op after", () => {
    const whole = analyzeGaps(new LoadedExport(h), { minGapNs: 10_000 });
    const order = whole.gaps.map((g) => [g.deviceId, g.startNs]);
    expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
    expect(new Set(whole.gaps.map((g) => g.deviceId))).toEqual(new Set([0, 1]));
    const callOf = h.sqlite.prepare(
      `SELECT r.start AS startNs, r.globalTid & 16777215 AS tid, s.value AS name FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
       JOIN StringIds AS s ON s.id = r.nameId WHERE r.correlationId = ? AND (r.globalTid >> 24) & 16777215 = ?`,
    );
    const withCall = whole.gaps.filter((g) => g.launchCall !== null);
    expect(new Set(withCall.map((g) => g.deviceId))).toEqual(new Set([0, 1]));
    for (const g of whole.gaps) {
      const row = g.after?.correlationId == null ? undefined : (callOf.get(g.after.correlationId, g.pid) as { startNs: number; tid: number; name: string } | undefined);
      expect(g.launchCall).toEqual(row ? { name: row.name.replace(/_v\d+$/, ''), startNs: row.startNs, tid: row.tid } : null);
    }
  });
});
