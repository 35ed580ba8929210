import type { EngineRow, EngineRows } from '../src/compare/engineRows.js';
import type { ChartDatum, ReportChart } from './document/charts.js';
import type { ReportDocument } from './document/document.js';
import { reportToHtml } from './html/reportHtml.js';
import type { DataTable } from './table.js';

/** Version string written in the HTML footer. */
export const ENGINES_GENERATOR = 'iterscope 0.1.0 engines';

const pct = (x: number | null) => (x == null ? null : x * 100);
const round = (x: number | null, digits: number) => (x == null ? null : Number(x.toFixed(digits)));

/** `log`, `benchmark`, ... and what it means for the row. */
function tokenSourceText(r: EngineRow): string {
  return r.tokenSource === 'none' ? 'none (per second only)' : r.tokenSource;
}

/** `ok`, `no GPU work: ...`, or the blocking health finding. */
function captureText(r: EngineRow): string {
  if (r.status === 'ok') return r.health.length ? `ok (caveats: ${r.health.map((h) => h.id).join(', ')})` : 'ok';
  return r.statusText ?? r.status;
}

/** The main table: per generated token, one row per capture. */
function perTokenTable(e: EngineRows): DataTable {
  return {
    title: 'Engines side by side: the serving span per generated token',
    columns: [
      { key: 'label', header: 'Capture', kind: 'text' },
      { key: 'engine', header: 'Engine', kind: 'text' },
      { key: 'tokenSource', header: 'Tokens from', kind: 'text' },
      { key: 'generatedTokens', header: 'Generated tokens', kind: 'int' },
      { key: 'contextTokens', header: 'Context tokens', kind: 'int' },
      { key: 'kernelNs', header: 'Kernel time (ns)', kind: 'ns' },
      { key: 'kernelNsPerGeneratedToken', header: 'Kernel / gen token (ns)', kind: 'ns' },
      { key: 'kernelNsPerContextToken', header: 'Kernel / ctx token (ns)', kind: 'ns' },
      { key: 'kernelsPerGeneratedToken', header: 'Kernels / gen token', kind: 'float' },
      { key: 'busyPct', header: 'GPU busy (%)', kind: 'percent' },
      { key: 'idlePct', header: 'GPU idle (%)', kind: 'percent' },
      { key: 'measuredThroughputTps', header: 'Measured tok/s (benchmark)', kind: 'float' },
      { key: 'capture', header: 'Capture health', kind: 'text' },
    ],
    rows: e.rows.map((r) => ({
      label: r.label,
      engine: r.engine,
      tokenSource: tokenSourceText(r),
      generatedTokens: r.generatedTokens,
      contextTokens: r.contextTokens,
      kernelNs: r.kernelNs,
      kernelNsPerGeneratedToken: round(r.kernelNsPerGeneratedToken, 1),
      kernelNsPerContextToken: round(r.kernelNsPerContextToken, 1),
      kernelsPerGeneratedToken: round(r.kernelsPerGeneratedToken, 2),
      busyPct: pct(r.busyShare),
      idlePct: pct(r.idleShare),
      measuredThroughputTps: round(r.measuredThroughputTps, 2),
      capture: captureText(r),
    })),
    notes: [...e.notes, ...e.rows.flatMap((r) => r.notes.map((n) => `${r.label}: ${n}`))],
  };
}

/** Copies and allocations in the serving span, whole and per generated token. */
function memoryTable(e: EngineRows): DataTable {
  return {
    title: 'Copies and allocations in the serving span',
    columns: [
      { key: 'label', header: 'Capture', kind: 'text' },
      { key: 'h2dBytes', header: 'H2D bytes', kind: 'int' },
      { key: 'h2dCopies', header: 'H2D copies', kind: 'int' },
      { key: 'd2hBytes', header: 'D2H bytes', kind: 'int' },
      { key: 'd2hCopies', header: 'D2H copies', kind: 'int' },
      { key: 'h2dBytesPerGeneratedToken', header: 'H2D bytes / gen token', kind: 'float' },
      { key: 'h2dCopiesPerGeneratedToken', header: 'H2D copies / gen token', kind: 'float' },
      { key: 'd2hBytesPerGeneratedToken', header: 'D2H bytes / gen token', kind: 'float' },
      { key: 'd2hCopiesPerGeneratedToken', header: 'D2H copies / gen token', kind: 'float' },
      { key: 'allocationCalls', header: 'cudaMalloc*/cuMemAlloc* calls', kind: 'int' },
      { key: 'allocations', header: 'Allocations (--cuda-memory-usage)', kind: 'int' },
      { key: 'allocationBytes', header: 'Allocated bytes', kind: 'int' },
    ],
    rows: e.rows.map((r) => ({
      label: r.label,
      h2dBytes: r.h2dBytes,
      h2dCopies: r.h2dCopies,
      d2hBytes: r.d2hBytes,
      d2hCopies: r.d2hCopies,
      h2dBytesPerGeneratedToken: round(r.h2dBytesPerGeneratedToken, 2),
      h2dCopiesPerGeneratedToken: round(r.h2dCopiesPerGeneratedToken, 3),
      d2hBytesPerGeneratedToken: round(r.d2hBytesPerGeneratedToken, 2),
      d2hCopiesPerGeneratedToken: round(r.d2hCopiesPerGeneratedToken, 3),
      allocationCalls: r.allocationCalls,
      allocations: r.allocations,
      allocationBytes: r.allocationBytes,
    })),
  };
}

/** Kernel time by category per generated token (the categories are one column group). */
function categoryTable(e: EngineRows): DataTable {
  return {
    title: 'Kernel time by category per generated token',
    columns: [{ key: 'label', header: 'Capture', kind: 'text' }, ...e.categories.map((c) => ({ key: `category:${c}`, header: `${c} (ns)`, kind: 'ns' as const, group: 'categories' }))],
    rows: e.rows.map((r) => ({ label: r.label, ...Object.fromEntries(e.categories.map((c) => [`category:${c}`, round(r.categoryNsPerGeneratedToken[c] ?? (r.generatedTokens ? 0 : null), 1)])) })),
  };
}

/** Per second of the serving span: comparable with or without a token count. */
function perSecondTable(e: EngineRows): DataTable {
  return {
    title: 'Per second of the serving span',
    columns: [
      { key: 'label', header: 'Capture', kind: 'text' },
      { key: 'spanNs', header: 'Serving span (ns)', kind: 'ns' },
      { key: 'steps', header: 'Steps', kind: 'int' },
      { key: 'kernelNsPerSecond', header: 'Kernel time / s (ns)', kind: 'ns' },
      { key: 'kernelsPerSecond', header: 'Kernels / s', kind: 'float' },
      { key: 'generatedTokensPerSecond', header: 'Generated tokens / s', kind: 'float' },
      { key: 'h2dBytesPerSecond', header: 'H2D bytes / s', kind: 'float' },
      { key: 'd2hBytesPerSecond', header: 'D2H bytes / s', kind: 'float' },
    ],
    rows: e.rows.map((r) => ({
      label: r.label,
      spanNs: r.spanNs,
      steps: r.steps,
      kernelNsPerSecond: round(r.kernelNsPerSecond, 0),
      kernelsPerSecond: round(r.kernelsPerSecond, 1),
      generatedTokensPerSecond: round(r.generatedTokensPerSecond, 1),
      h2dBytesPerSecond: round(r.h2dBytesPerSecond, 1),
      d2hBytesPerSecond: round(r.d2hBytesPerSecond, 1),
    })),
  };
}

/** Where each figure comes from: the export, how the engine was named, how start-up was told apart, the health findings. */
function captureTable(e: EngineRows): DataTable {
  return {
    title: 'The captures: engine, serving span, health',
    columns: [
      { key: 'label', header: 'Capture', kind: 'text' },
      { key: 'file', header: 'Export', kind: 'text' },
      { key: 'engine', header: 'Engine (named by)', kind: 'text' },
      { key: 'boundary', header: 'Start-up told apart by', kind: 'text' },
      { key: 'health', header: 'Health findings', kind: 'text' },
    ],
    rows: e.rows.map((r) => ({
      label: r.label,
      file: r.file,
      engine: `${r.engine}${r.engineFrom ? ` (${r.engineFrom})` : ''}`,
      boundary: r.boundary ?? '',
      health: r.status === 'no-gpu-work' ? (r.statusText ?? '') : r.health.map((h) => `${h.id} (${h.health}): ${h.title}`).join('; '),
    })),
  };
}

/** `engines`: the tables every text format prints (the per-token table first). */
export function enginesTables(e: EngineRows): DataTable[] {
  return [perTokenTable(e), categoryTable(e), memoryTable(e), perSecondTable(e), captureTable(e)];
}

/** Rows with a token count (the charts' bars); the others are named in the captions. */
const withTokens = (e: EngineRows) => e.rows.filter((r) => r.kernelNsPerGeneratedToken !== null);

function leftOutText(e: EngineRows): string {
  const out = e.rows.filter((r) => r.kernelNsPerGeneratedToken === null).map((r) => r.label);
  return out.length ? ` Not drawn (no GPU work or no token count): ${out.join(', ')}.` : '';
}

/** Kernel time per generated token by category, one bar per capture with a token count. */
export function enginesKernelTimeChart(e: EngineRows): ReportChart {
  const data: ChartDatum[] = [];
  const used = new Set<string>();
  for (const r of withTokens(e)) {
    for (const c of e.categories) {
      const v = r.categoryNsPerGeneratedToken[c];
      if (v > 0) {
        data.push({ capture: r.label, series: c, value: v });
        used.add(c);
      }
    }
  }
  return {
    id: 'engines-kernel-time-per-token',
    title: 'Kernel time per generated token, by kernel category',
    caption: `Kernel time of each serving span divided by its generated tokens, split by category (the category table).${leftOutText(e)}`,
    data,
    series: e.categories.filter((c) => used.has(c)),
  };
}

/** Kernels per generated token: fusion shows as fewer kernels. */
export function enginesKernelsChart(e: EngineRows): ReportChart {
  return {
    id: 'engines-kernels-per-token',
    title: 'Kernels per generated token (fewer: more fused)',
    caption: `Kernels launched in each serving span divided by its generated tokens (the main table).${leftOutText(e)}`,
    data: withTokens(e).map((r) => ({ capture: r.label, series: 'kernels', value: r.kernelsPerGeneratedToken! })),
    series: ['kernels'],
  };
}

/** The engine table as a document: the charts, then the tables. */
export function enginesDocument(e: EngineRows): ReportDocument {
  const charts = withTokens(e).length
    ? [{ kind: 'chart' as const, chart: enginesKernelTimeChart(e) }, { kind: 'chart' as const, chart: enginesKernelsChart(e) }]
    : [{ kind: 'paragraph' as const, text: `No capture has a generated-token count: no per-token chart.${leftOutText(e)}` }];
  const [perToken, ...rest] = enginesTables(e);
  return {
    title: `Engines side by side (${e.rows.length} captures)`,
    file: e.rows.map((r) => r.file).join(', '),
    sections: [
      { id: 'per-token', title: 'Per generated token', blocks: [...charts, { kind: 'table', table: perToken }] },
      { id: 'details', title: 'Categories, copies, per second, captures', blocks: rest.map((table) => ({ kind: 'table' as const, table })) },
    ],
  };
}

/** One self-contained HTML page (charts as inline SVG). */
export function enginesHtml(e: EngineRows): Promise<string> {
  return reportToHtml(enginesDocument(e), { generator: ENGINES_GENERATOR });
}
