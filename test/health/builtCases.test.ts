/**
 * Health findings on captures built from real exports: copies of fixtures edited with
 * better-sqlite3 in a temp dir (the real DDL, rows deleted or updated; never the fixture itself),
 * and the real graph-level capture (cpp-legacy-windows). Expected values are read from the edited
 * copy with plain SQL.
 */
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFindings } from '../../src/cli/commands/findings.js';
import { withExport } from '../../src/export/openExport.js';
import { findFindings } from '../../src/findings/findFindings.js';
import type { Finding, FindingsResult } from '../../src/findings/finding.js';
import { formatNs } from '../../src/formatNs.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { reportAnalysis } from '../helpers/pipeline.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-health-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const byId = (r: FindingsResult, id: string): Finding => {
  const f = r.findings.find((x) => x.id === id);
  if (!f) throw new Error(`no finding ${id} in ${r.findings.map((x) => x.id).join(', ')}`);
  return f;
};
const HEALTH_IDS = ['no-gpu-work', 'program-crashed', 'events-lost', 'serving-loop-missing', 'warmup-in-window', 'graph-level-trace', 'capture-cut'];

/** Graph-capture calls of the runtime table: first start, last end (plain SQL). */
function captureSpan(db: BetterSqlite3.Database): { s: number; e: number; n: number } {
  return db
    .prepare(
      `SELECT min(r.start) AS s, max(r."end") AS e, count(*) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
       WHERE s.value LIKE 'cudaStreamBeginCapture%' OR s.value LIKE 'cudaStreamEndCapture%' OR s.value LIKE 'cudaGraphInstantiate%'`,
    )
    .get() as { s: number; e: number; n: number };
}

describe('a capture holding only start-up work: pytorch-dense cut 1 ms after its CUDA-graph capture', () => {
  const file = join(dir, 'startup-only.sqlite');
  let result: FindingsResult;
  let span: { s: number; e: number; n: number };
  let after: { n: number; ns: number };
  let total: { n: number; ns: number };
  beforeAll(() => {
    copyExport(fixture('pytorch-dense', 'trace.sqlite'), file);
    editExport(file, (db) => {
      span = captureSpan(db);
      // What a --duration that ends during start-up records: nothing after the capture (and the first iteration).
      const cut = span.e + 1_000_000;
      for (const t of ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION', 'NVTX_EVENTS', 'OSRT_API']) {
        db.prepare(`DELETE FROM ${t} WHERE start > ?`).run(cut);
      }
      const ops = `SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET`;
      after = db.prepare(`SELECT count(*) AS n, coalesce(sum("end" - start), 0) AS ns FROM (${ops}) WHERE start > ?`).get(span.e) as { n: number; ns: number };
      total = db.prepare(`SELECT count(*) AS n, sum("end" - start) AS ns FROM (${ops})`).get() as { n: number; ns: number };
    });
    result = withExport(file, (h) => findFindings(reportAnalysis(h)));
  });

  it('the first finding says the serving loop is missing: GPU work stops at the graph capture', () => {
    expect(span.n).toBe(3);
    expect(total.n).toBeGreaterThan(500);
    const f = result.findings[0];
    expect(f.id).toBe('serving-loop-missing');
    expect(f.severity).toBe('high');
    expect(f.health).toBe('blocking');
    expect(f.title).toBe(`The serving loop is not in the capture: only start-up GPU work (the GPU work stops at CUDA-graph capture (${formatNs(span.s)}..${formatNs(span.e)}))`);
    expect(f.evidence[0].text).toBe(`3 graph-capture calls (cudaStreamBeginCapture / EndCapture / cudaGraphInstantiate) from ${formatNs(span.s)} to ${formatNs(span.e)}`);
    expect(f.evidence[1].text.startsWith(`after the capture: ${after.n} GPU ops, ${formatNs(after.ns)} (`)).toBe(true);
    expect(f.evidence[1].text).toContain(`of the ${formatNs(total.ns)} of GPU op time`);
    // TensorRT-LLM's markers are in the copy: its profile-window recipe is the remedy.
    expect(result.engine).toBe('tensorrt-llm');
    expect(f.remedy).toContain('TLLM_PROFILE_START_STOP');
    expect(result.findings.filter((x) => x.health === 'blocking').map((x) => x.id)).toEqual(['serving-loop-missing']);
  });
});

describe('a graph-level capture (cpp-legacy-windows, --cuda-graph-trace graph)', () => {
  it('says there is no per-kernel breakdown of the whole-graph time and gives --cuda-graph-trace node', async () => {
    const file = fixture('cpp-legacy-windows', 'trace.2.sqlite');
    const db = new BetterSqlite3(file, { readonly: true });
    const graphs = db.prepare(`SELECT count(*) AS n, sum("end" - start) AS ns FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`).get() as { n: number; ns: number };
    // Every GPU op table the export has (this one has no kernel or memset table).
    const tables = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'].filter((t) => db.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(t));
    expect(tables).toEqual(['CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE']);
    const all = db.prepare(`SELECT sum(ns) AS ns FROM (${tables.map((t) => `SELECT sum("end" - start) AS ns FROM ${t}`).join(' UNION ALL ')})`).get() as { ns: number };
    db.close();
    const result = await runFindings([file], { log: [fixture('cpp-legacy-windows', 'executor.log')] });
    const f = byId(result, 'graph-level-trace');
    const share = `${((graphs.ns / all.ns) * 100).toFixed(1)}%`;
    expect(f.title).toBe(`CUDA graphs traced whole (--cuda-graph-trace graph): ${share} of GPU op time without a per-kernel breakdown`);
    expect(f.evidence[0].text).toBe(`${graphs.n} whole-graph rows (CUPTI_ACTIVITY_KIND_GRAPH_TRACE), ${formatNs(graphs.ns)}: ${share} of the ${formatNs(all.ns)} of GPU op time; the kernels inside each graph launch are not recorded`);
    expect(f.severity).toBe('high');
    expect(f.health).toBe('caveat');
    expect(f.remedy).toContain('--cuda-graph-trace node');
    // A caveat, not a blocker: the findings with recoverable time still lead.
    expect(result.findings[0].id).toBe('late-launches');
  });

  it('a node-level capture (pytorch-dense) gets no health finding', async () => {
    const result = await runFindings([fixture('pytorch-dense', 'trace.sqlite')], { log: [fixture('pytorch-dense', 'iteration_log.txt')] });
    expect(result.findings.filter((f) => HEALTH_IDS.includes(f.id))).toEqual([]);
  });
});

describe('nsys diagnostics about dropped events: vllm-dense with DIAGNOSTIC_EVENT warnings added', () => {
  const file = join(dir, 'dropped.sqlite');
  // The texts are composed for this test (nsys's wording varies by version); the rows use the real DDL and enum ids.
  const dropped = ['CUPTI activity buffer overflowed: 1523 CUDA activity records were dropped.', 'OS runtime event buffer is full: events lost.'];
  let result: FindingsResult;
  let realWarnings: string[];
  beforeAll(async () => {
    copyExport(fixture('vllm-dense', 'trace.sqlite'), file);
    editExport(file, (db) => {
      realWarnings = (db.prepare(`SELECT DISTINCT text FROM DIAGNOSTIC_EVENT WHERE severity = 2`).all() as { text: string }[]).map((r) => r.text);
      const pid = (db.prepare(`SELECT globalPid FROM ProcessStreams LIMIT 1`).get() as { globalPid: number }).globalPid;
      const ins = db.prepare(`INSERT INTO DIAGNOSTIC_EVENT (timestamp, timestampType, source, severity, text, globalPid) VALUES (?, 2, 3, ?, ?, ?)`);
      ins.run(300_000_000, 2, dropped[0], pid);
      ins.run(300_000_100, 3, dropped[1], pid);
    });
    result = await runFindings([file], { log: [fixture('vllm-dense', 'vllm.log')] });
  });

  it('ranks events-lost first, quoting nsys, with the other findings after it', () => {
    const f = result.findings[0];
    expect(f.id).toBe('events-lost');
    expect(f.severity).toBe('high');
    expect(f.title).toBe(`nsys lost events during the capture: ${dropped[0]}`);
    const texts = f.evidence.map((e) => e.text);
    expect(texts.slice(0, 2)).toEqual([`nsys warning: "${dropped[0]}"`, `nsys error: "${dropped[1]}"`]);
    // The real "Not all ... events might have been collected" warnings ride along as evidence.
    for (const w of realWarnings.filter((t) => t.startsWith('Not all'))) expect(texts).toContain(`nsys warning: "${w}"`);
    expect(result.findings.slice(1).map((x) => x.id)).toEqual(expect.arrayContaining(['late-launches', 'launch-bound']));
    expect(result.findings.slice(1).every((x) => x.health !== 'blocking')).toBe(true);
  });

  it('the real export, with only "Not all ... events might have been collected" warnings, has no health finding', async () => {
    expect(realWarnings).toContain('Not all CUDA events might have been collected.');
    const real = await runFindings([fixture('vllm-dense', 'trace.sqlite')], { log: [fixture('vllm-dense', 'vllm.log')] });
    expect(real.findings.filter((f) => HEALTH_IDS.includes(f.id))).toEqual([]);
  });
});

describe('warm-up and a cut iteration: pytorch-dense with its graph capture moved into iteration 3 and the last range left open', () => {
  const file = join(dir, 'warmup-cut.sqlite');
  let result: FindingsResult;
  let iter3Start: number;
  /** The last iteration whose range starts before the moved capture ends (read from the copy). */
  let lastWarm: number;
  beforeAll(async () => {
    copyExport(fixture('pytorch-dense', 'trace.sqlite'), file);
    editExport(file, (db) => {
      const range = (n: number) =>
        db.prepare(`SELECT n.rowid AS id, n.start FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value LIKE ?`).get(`[Executor] _forward_step ${n}:%`) as { id: number; start: number };
      iter3Start = range(3).start;
      const span = captureSpan(db);
      // The capture calls (no GPU op correlates with them) shifted to 1 ms into iteration 3.
      db.prepare(
        `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + ?, "end" = "end" + ? WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaStreamBeginCapture%' OR value LIKE 'cudaStreamEndCapture%' OR value LIKE 'cudaGraphInstantiate%')`,
      ).run(iter3Start + 1_000_000 - span.s, iter3Start + 1_000_000 - span.s);
      const movedEnd = iter3Start + 1_000_000 + (span.e - span.s);
      const starts = db.prepare(`SELECT s.value AS text FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value LIKE '[Executor] _forward_step %' AND n.start < ?`).all(movedEnd) as { text: string }[];
      lastWarm = Math.max(...starts.map((r) => Number(/_forward_step (\d+):/.exec(r.text)![1])));
      // What nsys writes when the capture stops inside a range: no end.
      db.prepare(`UPDATE NVTX_EVENTS SET "end" = NULL WHERE rowid = ?`).run(range(119).id);
    });
    result = await runFindings([file], { log: [fixture('pytorch-dense', 'iteration_log.txt')] });
  });

  it('warmup-in-window: exclude the iterations up to the one the capture ends in', () => {
    expect(lastWarm).toBeGreaterThanOrEqual(3);
    const f = byId(result, 'warmup-in-window');
    expect(f.title).toBe(`Warm-up inside the capture window: exclude iterations 0..${lastWarm} from steady-state numbers`);
    expect(f.health).toBe('caveat');
    expect(f.evidence[0].iter).toBe(lastWarm);
    expect(f.evidence[0].startNs).toBe(iter3Start + 1_000_000);
    expect(f.remedy.startsWith(`Iterations 0..${lastWarm} are warm-up`)).toBe(true);
  });

  it('capture-cut: the capture ended inside iteration 119', () => {
    const f = byId(result, 'capture-cut');
    expect(f.title).toBe('The capture ended inside iteration 119: exclude it');
    expect(f.severity).toBe('medium');
    expect(f.evidence[0].iter).toBe(119);
    expect(f.evidence[0].text).toMatch(/^iteration 119: its NVTX range \(\[Executor\] _forward_step 119: .*\) never closed/);
  });
});

describe('the coverage finding never recommends tracing what was traced', () => {
  it('fieldguide-vllm (-t cuda,nvtx,cudnn,cublas --cuda-memory-usage=true): adds only python-gil and GPU metrics', async () => {
    const r = await runFindings([fixture('fieldguide-vllm', 'trace.sqlite')], { log: [fixture('fieldguide-vllm', 'vllm.log')] });
    const cov = byId(r, 'coverage');
    expect(cov.remedy.startsWith('Profile with `nsys profile -t cuda,nvtx,cudnn,cublas,python-gil --gpu-metrics-devices=all` (adds python-gil, --gpu-metrics-devices=all)')).toBe(true);
    expect(cov.remedy).not.toContain('--cuda-memory-usage');
  });

  it('NVTX traced but never emitted (nsys2025.5.1_assignment_cuda): "traced, nothing recorded", no -t nvtx to add', async () => {
    const r = await runFindings([fixture('external', 'nsys2025.5.1_assignment_cuda.sqlite')]);
    const cov = byId(r, 'coverage');
    expect(cov.evidence[0].text).toBe('NVTX was traced (-t nvtx) but the program emitted no NVTX event: this hides iterations, host steps (nvtx:<range> causes), GC and GIL');
    expect(cov.confidence.traced).toContain('NVTX (nothing recorded)');
    expect(cov.confidence.notTraced).not.toContain('NVTX');
    expect(cov.remedy).toContain('(adds python-gil, --gpu-metrics-devices=all, --cuda-memory-usage=true)');
  });

  it('NVTX not traced (nsys2026.1_torch_tiny_nsysai: -t cuda only): adds nvtx', async () => {
    const r = await runFindings([fixture('external', 'nsys2026.1_torch_tiny_nsysai.sqlite')]);
    const cov = byId(r, 'coverage');
    expect(cov.evidence[0].text).toBe('NVTX was not traced: this hides iterations, host steps (nvtx:<range> causes), GC and GIL');
    expect(cov.remedy.startsWith('Profile with `nsys profile -t cuda,nvtx,python-gil')).toBe(true);
  });
});

describe('external exports without GPU work get the finding they deserve', () => {
  it('nsys2023.4_nocuda_python: the program crashed on an ImportError before any CUDA call', async () => {
    const file = fixture('external', 'nsys2023.4_nocuda_python.sqlite');
    const db = new BetterSqlite3(file, { readonly: true });
    const stderr = (db.prepare(`SELECT c.value AS v FROM ProcessStreams p JOIN StringIds f ON f.id = p.filenameId JOIN StringIds c ON c.id = p.contentId WHERE f.value LIKE '%stderr%'`).get() as { v: string }).v;
    db.close();
    const last = stderr.split('\n').filter((l) => l.trim()).pop()!;
    expect(last).toMatch(/^ImportError: /);
    const r = await runFindings([file]);
    expect(r.findings.map((f) => f.id)).toEqual(['no-gpu-work', 'program-crashed']);
    expect(r.findings[0].title).toContain(`exited with \`${last}\``);
    expect(r.findings[1].evidence[0].text.endsWith(`exited with: ${last}`)).toBe(true);
  });

  it('a PyTorch profiler trace recorded under nsys (CPU ops only): no GPU work, and the remedy is --torch-trace', async () => {
    const r = await runFindings([fixture('pytorch-torch-trace', 'trace.json')]);
    expect(r.findings.map((f) => f.id)).toEqual(['no-gpu-work']);
    expect(r.findings[0].title).toBe('No GPU work was recorded: the PyTorch profiler trace holds 6034 CPU ops and no kernel, memcpy or memset (recorded without CUDA activity, or while nsys held CUPTI)');
    expect(r.findings[0].remedy).toContain('--torch-trace');
  });
});
