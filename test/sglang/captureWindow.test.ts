/**
 * Time-window captures (`nsys profile --delay 60 --duration 70`, SGLang's documented command): the
 * first and last steps can be cut by the window. Built from copies of the sglang/ export, edited
 * in place with its real DDL (test/helpers/hostileExport.ts): what a capture that began and ended
 * inside a step holds. Cut steps leave the per-iteration rows, with a note; the others are the
 * rows of the whole capture.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { parseIterationLogFile } from '../../src/logs/index.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const NSYS = fixture('sglang', 'trace.sqlite');
const LOG = fixture('sglang', 'sglang.log');
const GPU_TABLES = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'];

function runBatches(db: BetterSqlite3.Database): { rowid: number; start: number; end: number }[] {
  return db
    .prepare(
      `SELECT n.rowid AS rowid, n.start AS start, n.end AS end FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
       WHERE s.value = 'scheduler.run_batch' ORDER BY n.start`,
    )
    .all() as { rowid: number; start: number; end: number }[];
}

/** Collection from the middle of the first step to the middle of the last: nothing outside, the first range seen from the start, the last never closed. */
function cutBothEnds(db: BetterSqlite3.Database): void {
  const runs = runBatches(db);
  const t0 = Math.floor((runs[0].start + runs[0].end) / 2);
  const last = runs[runs.length - 1];
  const t1 = Math.floor((last.start + last.end) / 2);
  for (const table of ['CUPTI_ACTIVITY_KIND_RUNTIME', ...GPU_TABLES]) db.prepare(`DELETE FROM ${table} WHERE start < ? OR start > ?`).run(t0, t1);
  db.prepare('DELETE FROM NVTX_EVENTS WHERE eventType = 59 AND rowid NOT IN (?, ?) AND (start < ? OR start > ?)').run(runs[0].rowid, last.rowid, t0, t1);
  db.prepare('UPDATE NVTX_EVENTS SET start = ? WHERE rowid = ?').run(t0, runs[0].rowid);
  db.prepare('UPDATE NVTX_EVENTS SET end = NULL WHERE rowid = ?').run(last.rowid);
}

/** The window closed while the last step's kernels ran: its ranges and launch calls are there, its GPU work is not. */
function cutLastKernels(db: BetterSqlite3.Database): void {
  const last = runBatches(db).at(-1)!;
  for (const table of GPU_TABLES) {
    db.prepare(`DELETE FROM ${table} WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start >= ? AND start <= ?)`).run(last.start, last.end);
  }
}

describe('sglang/ cut by the capture window', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-sglang-window-'));
  const logs = [parseIterationLogFile(LOG)];
  const whole = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs }));

  it('first step seen from its middle, last never closed: both left out with a note; steps 41..118 keep their numbers, counts and GPU time', () => {
    const path = editExport(copyExport(NSYS, join(dir, 'both-ends.sqlite')), cutBothEnds);
    const a = withExport(path, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(a.coverage.windows).toBe(80);
    expect(a.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 78 }, (_, i) => 41 + i));
    expect(a.coverage.cutSteps).toEqual([40, 119]);
    const note = a.coverage.notes.find((n) => /2 steps cut by the capture window/.test(n))!;
    expect(note).toMatch(/40 \(the capture began inside it/);
    expect(note).toMatch(/119 \(its range never closed/);
    const before = new Map(whole.iterations.map((r) => [r.iter, r]));
    for (const r of a.iterations) {
      const w = before.get(r.iter)!;
      expect([r.startNs, r.kernelNs, r.kernelCount, r.contextRequests, r.contextTokens, r.generationRequests, r.phase], `iteration ${r.iter}`).toEqual([w.startNs, w.kernelNs, w.kernelCount, w.contextRequests, w.contextTokens, w.generationRequests, w.phase]);
    }
    expect(a.coverage.placedOps + (a.coverage.cutStepOps ?? 0)).toBe(a.coverage.gpuOps - a.coverage.outsideOps - a.coverage.noRuntimeOps);
  });

  it("the last step's kernels missing (its launches are there): left out, the reason names them", () => {
    const path = editExport(copyExport(NSYS, join(dir, 'last-kernels.sqlite')), cutLastKernels);
    const a = withExport(path, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(a.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 79 }, (_, i) => 40 + i));
    expect(a.coverage.cutSteps).toEqual([119]);
    expect(a.coverage.notes.some((n) => /119 \(\d+ of its launches have no GPU work in the export\)/.test(n))).toBe(true);
  });

  it('the whole capture has no cut step', () => {
    expect(whole.coverage.cutSteps).toBeUndefined();
    expect(whole.iterations).toHaveLength(80);
  });
});
