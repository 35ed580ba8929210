/**
 * `openExport` + `info` on every export under ../shared/fixtures (our fixtures and the 16
 * schema-drift files in external/, 2021 to 2026.2). Values are checked against what plain SQL
 * reads from the same files.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openExport, withExport } from '../../src/export/openExport.js';
import { describeExport, type ExportInfo } from '../../src/analysis/exportInfo.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { FIXTURES, fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';

function findExports(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findExports(p));
    else if (name.endsWith('.sqlite')) out.push(p);
  }
  return out;
}

const ALL = findExports(FIXTURES);
const EXTERNAL = ALL.filter((p) => p.includes('/external/'));

/** Plain better-sqlite3 on the file: the reference the library is checked against. */
function withSql<T>(file: string, fn: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function tablesOf(db: BetterSqlite3.Database): Set<string> {
  return new Set(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]);
}

const infoCache = new Map<string, ExportInfo>();
/** describeExport through the library (memoised: the per-file tests ask twice). */
function info(file: string): ExportInfo {
  let i = infoCache.get(file);
  if (!i) infoCache.set(file, (i = withExport(file, (h) => describeExport(new LoadedExport(h)))));
  return i;
}

/** Exports the suite relies on by name; the fixture tree may hold more (new folders arrive). */
const REQUIRED = [
  'cpp-legacy-windows/trace.1.sqlite',
  'cpp-legacy-windows/trace.2.sqlite',
  'pytorch-dense/trace.sqlite',
  'pytorch-dense-long/trace.sqlite',
  'pytorch-gpu-metrics/trace.sqlite',
  'pytorch-moe-perfect-router/trace.sqlite',
  'pytorch-moe-window/trace.sqlite',
  'pytorch-tp2/trace.rank0.sqlite',
  'pytorch-tp2/trace.rank1.sqlite',
];

it('finds every fixture export: the named ones, every external one, and any new folder', () => {
  const found = ALL.map((p) => relative(FIXTURES, p));
  for (const r of REQUIRED) expect(found).toContain(r);
  // external/ holds the 16 schema-drift files (2021 to 2026.2) at least.
  expect(EXTERNAL.length).toBeGreaterThanOrEqual(16);
  // Every fixture folder that holds an export is covered by the per-file tests below.
  const folders = readdirSync(FIXTURES).filter((d) => statSync(join(FIXTURES, d)).isDirectory());
  for (const d of folders) {
    const hasExport = readdirSync(join(FIXTURES, d)).some((f) => f.endsWith('.sqlite'));
    expect(found.some((f) => f.startsWith(`${d}/`)), `${d} has an export`).toBe(hasExport);
  }
});

describe.each(ALL.map((file) => ({ file, name: relative(FIXTURES, file) })))('info on $name', ({ file }) => {
  it('library describeExport reads versions, GPUs, row counts and sessions as plain SQL does', () => {
    const i = info(file);
    withSql(file, (db) => {
      const tables = tablesOf(db);
      const metaTable = tables.has('META_DATA_EXPORT') ? 'META_DATA_EXPORT' : tables.has('EXPORT_META_DATA') ? 'EXPORT_META_DATA' : null;
      expect(i.metadataTable).toBe(metaTable);
      const meta = (key: string) => (metaTable ? ((db.prepare(`SELECT value FROM ${metaTable} WHERE name = ?`).pluck().get(key) as string | undefined) ?? null) : null);
      expect(i.productVersion).toBe(meta('EXPORT_PRODUCT_VERSION'));
      expect(i.schemaVersion).toBe(meta('EXPORT_SCHEMA_VERSION'));
      if (metaTable) expect(i.productVersion).toMatch(/^20\d\d\.\d+\.\d+\.\d+$/);

      // Every counted table exists and has exactly that many rows; the key tables are counted
      // exactly when they exist (absent = lazy export, not zero rows).
      for (const [t, n] of Object.entries(i.rowCounts)) {
        expect(tables.has(t), `${t} exists`).toBe(true);
        expect(n, `rows of ${t}`).toBe(db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get());
      }
      for (const t of ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE', 'NVTX_EVENTS', 'StringIds']) {
        expect(t in i.rowCounts, `${t} counted iff present`).toBe(tables.has(t));
      }

      const gpuNames = tables.has('TARGET_INFO_GPU') ? (db.prepare('SELECT name FROM TARGET_INFO_GPU ORDER BY id').pluck().all() as string[]) : [];
      expect(i.gpus.map((g) => g.name)).toEqual(gpuNames);

      if (tables.has('TARGET_INFO_SESSION_START_TIME')) {
        const ns = db.prepare('SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME').safeIntegers(true).pluck().get() as bigint;
        expect(i.sessionStartEpochNs).toBe(ns);
        expect(i.sessionStartUtc).toBe(new Date(Number(ns / 1_000_000n)).toISOString());
      } else {
        expect(i.sessionStartEpochNs).toBeNull();
      }

      const devices = new Set<number>();
      for (const t of ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE']) {
        if (tables.has(t)) for (const d of db.prepare(`SELECT DISTINCT deviceId FROM ${t}`).pluck().all() as number[]) devices.add(d);
      }
      expect(i.activeDevices).toEqual([...devices].sort((a, b) => a - b));

      const graphRows = tables.has('CUPTI_ACTIVITY_KIND_GRAPH_TRACE') ? (db.prepare('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE').pluck().get() as number) : 0;
      const nodeKernels = tables.has('CUPTI_ACTIVITY_KIND_KERNEL')
        ? (db.prepare('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NOT NULL').pluck().get() as number)
        : 0;
      expect(i.graphTraceMode).toBe(graphRows > 0 ? 'graph' : nodeKernels > 0 ? 'node' : 'none');

      const ranges = tables.has('NVTX_EVENTS') ? (db.prepare('SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)').pluck().get() as number) : 0;
      expect(i.nvtxDomains.reduce((a, d) => a + d.ranges, 0)).toBe(ranges);
    });
  });

  it('CLI info --format json exits 0 with the same facts, 64-bit values exact', () => {
    const r = runCli(['info', file, '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    const lib = info(file);
    expect(j.file).toBe(file);
    expect(j.productVersion).toBe(lib.productVersion);
    expect(j.rowCounts).toEqual(lib.rowCounts);
    expect(j.gpus.map((g: { name: string }) => g.name)).toEqual(lib.gpus.map((g) => g.name));
    expect(j.graphTraceMode).toBe(lib.graphTraceMode);
    // utcEpochNs (~1.7e18) exceeds 2^53: JSON carries it as an exact decimal string.
    if (lib.sessionStartEpochNs != null) expect(j.sessionStartEpochNs).toBe(lib.sessionStartEpochNs.toString());
  });
});

describe('what info reports on specific exports', () => {
  it('legacy 2021 export without a metadata table: no versions, but GPUs and kernels', () => {
    const i = info(fixture('external', 'legacy2021_mordred.sqlite'));
    expect(i.productVersion).toBeNull();
    expect(i.schemaVersion).toBeNull();
    expect(i.metadataTable).toBeNull();
    expect(i.gpus.map((g) => g.name)).toEqual(['Quadro RTX 6000']);
    expect(i.rowCounts.CUPTI_ACTIVITY_KIND_KERNEL).toBe(12);
    expect(i.rowCounts.CUPTI_ACTIVITY_KIND_RUNTIME).toBe(111);
    expect(i.nvtxDomains).toEqual([]);
    expect(i.graphTraceMode).toBe('none');
  });

  it('2022.1 Windows export: non-UTF-8 metadata (Latin-1 user name) does not break opening or info', () => {
    const file = fixture('external', 'nsys2022.1_windows_extrap.sqlite');
    const rawUser = withSql(file, (db) => db.prepare(`SELECT hex(value) FROM EXPORT_META_DATA WHERE name = 'EXPORT_USER'`).pluck().get() as string);
    expect(rawUser.endsWith('E1')).toBe(true); // 0xE1 = Latin-1 'á', not valid UTF-8 on its own
    const h = openExport(file);
    try {
      expect(h.metadata.metadataTable).toBe('EXPORT_META_DATA');
      expect(h.metadata.productVersion).toBe('2022.1.1.61');
      expect(h.metadata.schemaVersion).toBe('2.9.1');
      expect(h.metadata.values.get('EXPORT_PLATFORM')).toBe('windows-desktop');
      expect(h.metadata.values.get('EXPORT_USER')).toMatch(/^Alexander Gei/);
    } finally {
      h.close();
    }
    const i = info(file);
    expect(i.gpus.map((g) => g.name)).toEqual(['GeForce GTX 1060 with Max-Q Design', 'Intel(R) HD Graphics 630', 'Microsoft Basic Render Driver']);
    expect(i.rowCounts.CUPTI_ACTIVITY_KIND_KERNEL).toBe(12);
    expect(i.rowCounts.NVTX_EVENTS).toBe(77);
    expect(i.nvtxDomains).toEqual([{ domainId: 1, pid: expect.any(Number), name: 'de.tu-darmstadt.parallel.extra_prof', ranges: 76 }]);
  });

  it('flameox 2025.5.2 and cpp-legacy-windows: graph-level CUDA graph trace', () => {
    const flame = info(fixture('external', 'nsys2025.5.2_cudagraph_flameox.sqlite'));
    expect(flame.graphTraceMode).toBe('graph');
    expect(flame.graphTraceModeConfigured).toBe('Graph');
    expect(flame.rowCounts.CUPTI_ACTIVITY_KIND_GRAPH_TRACE).toBe(2);
    expect(flame.rowCounts.CUPTI_ACTIVITY_KIND_KERNEL).toBe(3);
    for (const n of [1, 2]) {
      const i = info(fixture('cpp-legacy-windows', `trace.${n}.sqlite`));
      expect(i.graphTraceMode).toBe('graph');
      expect(i.graphTraceModeConfigured).toBe('Graph');
      expect('CUPTI_ACTIVITY_KIND_KERNEL' in i.rowCounts).toBe(false);
      expect(i.profilerApiGated).toBe(true);
      expect(i.profileStartStop).toBe('20,40-45');
      expect(i.gpus.map((g) => g.name)).toEqual(['NVIDIA H100 80GB HBM3']);
    }
  });

  it('pytorch-dense: node-level graph trace, GIL and GC traced, whole run captured', () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const i = info(file);
    expect(i.productVersion).toMatch(/^2025\.3\./);
    expect(i.schemaVersion).toBe('3.20.3');
    expect(i.graphTraceMode).toBe('node');
    expect(i.graphTraceModeConfigured).toBe('Node');
    expect(i.rowCounts.CUPTI_ACTIVITY_KIND_KERNEL).toBe(56503);
    expect(i.gilTraced).toBe(true);
    expect(i.gcTraced).toBe(true);
    expect(i.profilerApiGated).toBe(false);
    expect(i.profileStartStop).toBeNull();
    expect(i.environment.TLLM_PROFILE_RECORD_GC).toBe('1');
    expect(i.nvtxDomains.map((d) => [d.domainId, d.name])).toEqual([
      [0, null],
      [1, 'GIL Trace'],
      [2, 'TensorRT-LLM'],
    ]);
    // One CUDA process; its threads are the ThreadNames rows of that PID.
    const threads = withSql(file, (db) =>
      db.prepare(`SELECT globalTid & 16777215 AS tid FROM ThreadNames WHERE ((globalTid >> 24) & 16777215) = 477 ORDER BY tid`).pluck().all(),
    );
    expect(i.processes.map((p) => [p.pid, p.name, p.usesCuda])).toEqual([[477, 'python3', true]]);
    expect(i.processes[0].threads.map((t) => t.tid)).toEqual(threads);
  });

  it('pytorch-tp2: no GIL trace; Python GC ranges are present (TLLM_PROFILE_RECORD_GC=1 in the capture env)', () => {
    for (const rank of [0, 1]) {
      const file = fixture('pytorch-tp2', `trace.rank${rank}.sqlite`);
      const i = info(file);
      expect(i.gilTraced).toBe(false);
      expect(i.nvtxDomains.some((d) => d.name === 'GIL Trace')).toBe(false);
      const gcRanges = withSql(file, (db) => db.prepare(`SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60 AND text = 'Python GC'`).pluck().get() as number);
      expect(gcRanges).toBeGreaterThan(0);
      expect(i.gcTraced).toBe(true);
      expect(i.environment.TLLM_PROFILE_RECORD_GC).toBe('1');
      expect(i.profilerApiGated).toBe(true);
      expect(i.profileStartStop).toBe('30-70');
      expect(i.graphTraceMode).toBe('none');
    }
  });

  it('pytorch-gpu-metrics: no GIL trace', () => {
    const i = info(fixture('pytorch-gpu-metrics', 'trace.sqlite'));
    expect(i.gilTraced).toBe(false);
    expect(i.rowCounts.GPU_METRICS).toBe(341902);
  });

  it('pytorch-moe-window: cudaProfilerApi-gated capture of loops 100-150', () => {
    const i = info(fixture('pytorch-moe-window', 'trace.sqlite'));
    expect(i.profilerApiGated).toBe(true);
    expect(i.profileStartStop).toBe('100-150');
    expect(i.environment.TLLM_PROFILE_START_STOP).toBe('100-150');
    expect(i.graphTraceMode).toBe('node');
  });

  it.each(['nsys2026.2_mfu_2gpu_before_nsysai.sqlite', 'nsys2026.2_mfu_2gpu_after_nsysai.sqlite'])(
    '%s: NVTX domain 1 is used without a DomainCreate row, so it has no name; no GPU table',
    (name) => {
      const file = fixture('external', name);
      const creates = withSql(file, (db) => db.prepare('SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75').pluck().get() as number);
      expect(creates).toBe(0);
      const i = info(file);
      expect(i.productVersion).toBe('2026.2.1.210');
      expect(i.schemaVersion).toBe('3.25.0');
      const d1 = i.nvtxDomains.filter((d) => d.domainId === 1);
      expect(d1.length).toBeGreaterThan(0);
      for (const d of d1) expect(d.name).toBeNull();
      expect(i.gpus).toEqual([]);
      expect(i.activeDevices).toEqual([0, 1]);
      expect(i.processes.filter((p) => p.usesCuda)).toHaveLength(2);
    },
  );

  it('2023.4 export with no CUDA or NVTX tables: info still works', () => {
    const i = info(fixture('external', 'nsys2023.4_nocuda_python.sqlite'));
    expect(i.productVersion).toBe('2023.4.1.97');
    expect(i.metadataTable).toBe('META_DATA_EXPORT');
    for (const t of ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'NVTX_EVENTS']) expect(t in i.rowCounts).toBe(false);
    expect(i.activeDevices).toEqual([]);
    expect(i.nvtxDomains).toEqual([]);
    expect(i.graphTraceMode).toBe('none');
    expect(i.gpus.map((g) => g.name)).toEqual(['NVIDIA GeForce RTX 4090']);
  });
});

describe('openExport handle: table and column probes follow the file', () => {
  it('reports column drift of the kernel and NVTX tables across versions', () => {
    const probe = (name: string) => {
      const h = openExport(fixture('external', name));
      try {
        return {
          kernel: h.hasTable('CUPTI_ACTIVITY_KIND_KERNEL'),
          graphId: h.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'graphId'),
          binaryData: h.hasColumn('NVTX_EVENTS', 'binaryData'),
          absentCols: h.columnsOf('NO_SUCH_TABLE'),
        };
      } finally {
        h.close();
      }
    };
    expect(probe('nsys2022.2_mpi_saxpy_pipit.sqlite')).toEqual({ kernel: true, graphId: false, binaryData: false, absentCols: [] });
    expect(probe('nsys2024.6_nvfuser_matmul.sqlite')).toEqual({ kernel: true, graphId: false, binaryData: true, absentCols: [] });
    expect(probe('nsys2025.5.1_assignment_cuda.sqlite')).toEqual({ kernel: true, graphId: true, binaryData: false, absentCols: [] });
    expect(probe('nsys2025.3_ripgrep_runtime_only.sqlite')).toEqual({ kernel: false, graphId: false, binaryData: false, absentCols: [] });
  });

  it('opens every export read-only', () => {
    for (const file of EXTERNAL) {
      const h = openExport(file);
      try {
        expect(h.sqlite.readonly, basename(file)).toBe(true);
        expect(h.path).toBe(file);
      } finally {
        h.close();
      }
      expect(h.sqlite.open).toBe(false);
    }
  });
});
