import type { GapAnalysis, GapRow } from '../src/gaps/analyzeGaps.js';
import type { GapOp } from '../src/gaps/findGaps.js';
import type { RankGap } from '../src/ranks/acrossExports.js';
import type { DataTable } from './table.js';
import { formatNs } from './units.js';

/** The op's full name (the human-readable writers shorten kernel names, CSV/JSON keep them whole). */
function opText(op: GapOp | null): string {
  return op ? op.name : '';
}

function share(part: number, whole: number): number {
  return whole > 0 ? Number(((part * 100) / whole).toFixed(1)) : 0;
}

/** `gc 99.1%, nvtx:_schedule 0.5%, unattributed 0.4%` (shares of the gap, priority order). */
export function causesText(row: Pick<GapRow, 'causes' | 'durationNs'>): string {
  return Object.entries(row.causes)
    .map(([c, ns]) => `${c} ${share(ns, row.durationNs).toFixed(1)}%`)
    .join(', ');
}

/** The columns of a table of gaps (the SMs Active column only when metrics were sampled). */
function gapColumns(withSmActive: boolean): DataTable['columns'] {
  return [
    { key: 'deviceId', header: 'Device', kind: 'int' },
    { key: 'startNs', header: 'Start (ns)', kind: 'ns' },
    { key: 'durationNs', header: 'Duration (ns)', kind: 'ns' },
    { key: 'iter', header: 'Iter', kind: 'int' },
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'cause', header: 'Cause', kind: 'text' },
    { key: 'causesText', header: 'Causes', kind: 'text' },
    ...(withSmActive ? [{ key: 'smActivePct', header: 'SMs Active (%)', kind: 'percent' } as const] : []),
    { key: 'launch', header: 'Launch API', kind: 'text' },
    { key: 'before', header: 'Op before', kind: 'text', display: 'kernel-name' },
    { key: 'after', header: 'Op after', kind: 'text', display: 'kernel-name' },
  ];
}

/** One gap as a table row. */
function gapCells(r: GapRow): DataTable['rows'][number] {
  return {
    deviceId: r.deviceId,
    startNs: r.startNs,
    durationNs: r.durationNs,
    iter: r.iter,
    phase: r.phase,
    cause: r.cause,
    causesText: causesText(r),
    smActivePct: r.smActivePct ?? null,
    launch: r.launchCall ? `${r.launchCall.name} @${r.launchCall.startNs - r.startNs >= 0 ? '+' : ''}${formatNs(r.launchCall.startNs - r.startNs)}` : '',
    before: opText(r.before),
    after: opText(r.after),
  };
}

/** The longest gaps, longest first. */
export function topGapsTable(analysis: GapAnalysis, top: number): DataTable {
  const rows = [...analysis.gaps].sort((a, b) => b.durationNs - a.durationNs || a.startNs - b.startNs).slice(0, top > 0 ? top : undefined);
  return {
    title: `Top ${rows.length} of ${analysis.gaps.length} GPU idle gaps >= ${formatNs(analysis.minGapNs)}`,
    columns: gapColumns(rows.some((r) => r.smActivePct != null)),
    rows: rows.map(gapCells),
  };
}

/** The longest gaps over several ranks (`longestGapsAcrossRanks`), with a Rank column. */
export function topGapsAcrossRanksTable(gaps: readonly RankGap[], of: { total: number; minGapNs: number; ranks: number; withSmActive: boolean }): DataTable {
  return {
    title: `Top ${gaps.length} of ${of.total} GPU idle gaps >= ${formatNs(of.minGapNs)} over ${of.ranks} ranks`,
    columns: [{ key: '__rank', header: 'Rank', kind: 'int' }, ...gapColumns(of.withSmActive)],
    rows: gaps.map((g) => ({ __rank: g.rank, ...gapCells(g.gap) })),
  };
}

/** Per device: span, busy, idle, and how many gaps were long or fragmented. */
export function deviceGapTable(analysis: GapAnalysis): DataTable {
  return {
    title: 'GPU busy and idle per device',
    columns: [
      { key: 'deviceId', header: 'Device', kind: 'int' },
      { key: 'spanNs', header: 'Span (ns)', kind: 'ns' },
      { key: 'busyNs', header: 'Busy (ns)', kind: 'ns' },
      { key: 'busyPercent', header: 'Busy (%)', kind: 'percent' },
      { key: 'idleNs', header: 'Idle (ns)', kind: 'ns' },
      { key: 'gaps', header: 'Gaps', kind: 'int' },
      { key: 'gapIdleNs', header: 'Gap idle (ns)', kind: 'ns' },
      { key: 'fragmentedGaps', header: 'Fragmented gaps', kind: 'int' },
      { key: 'fragmentedIdleNs', header: 'Fragmented idle (ns)', kind: 'ns' },
    ],
    rows: analysis.devices.map((d) => ({ ...d, busyPercent: share(d.busyNs, d.spanNs), pids: d.pids.join(' ') })) as unknown as DataTable['rows'],
  };
}

function fragmentedLabel(minGapNs: number): string {
  return `(fragmented < ${formatNs(minGapNs)})`;
}

/** Per device: idle time by cause, plus the fragmented idle; the rows of a device sum to its idle. */
export function deviceCauseTable(analysis: GapAnalysis): DataTable {
  const rows: DataTable['rows'] = [];
  for (const d of analysis.devices) {
    const primary = new Map<string, number>();
    for (const g of analysis.gaps) if (g.deviceId === d.deviceId) primary.set(g.cause, (primary.get(g.cause) ?? 0) + 1);
    for (const [cause, ns] of Object.entries(d.idleByCauseNs)) {
      rows.push({ deviceId: d.deviceId, cause, idleNs: ns, percent: share(ns, d.idleNs), primaryGaps: primary.get(cause) ?? 0 });
    }
    if (d.fragmentedIdleNs > 0) rows.push({ deviceId: d.deviceId, cause: fragmentedLabel(analysis.minGapNs), idleNs: d.fragmentedIdleNs, percent: share(d.fragmentedIdleNs, d.idleNs), primaryGaps: null });
  }
  return {
    title: 'GPU idle time by cause per device',
    columns: [
      { key: 'deviceId', header: 'Device', kind: 'int' },
      { key: 'cause', header: 'Cause', kind: 'text' },
      { key: 'idleNs', header: 'Idle (ns)', kind: 'ns' },
      { key: 'percent', header: 'Of idle (%)', kind: 'percent' },
      { key: 'primaryGaps', header: 'Gaps (primary cause)', kind: 'int' },
    ],
    rows,
  };
}

/** Per iteration phase: idle time by cause, plus the fragmented idle. */
export function phaseCauseTable(analysis: GapAnalysis): DataTable {
  const rows: DataTable['rows'] = [];
  for (const p of analysis.phases) {
    const idle = p.gapIdleNs + p.fragmentedIdleNs;
    for (const [cause, ns] of Object.entries(p.idleByCauseNs)) rows.push({ phase: p.phase, iterations: p.iterations, cause, idleNs: ns, percent: share(ns, idle) });
    if (p.fragmentedIdleNs > 0) rows.push({ phase: p.phase, iterations: p.iterations, cause: fragmentedLabel(analysis.minGapNs), idleNs: p.fragmentedIdleNs, percent: share(p.fragmentedIdleNs, idle) });
  }
  return {
    title: 'GPU idle time by cause per iteration phase (none: outside iteration windows)',
    columns: [
      { key: 'phase', header: 'Phase', kind: 'text' },
      { key: 'iterations', header: 'Iterations', kind: 'int' },
      { key: 'cause', header: 'Cause', kind: 'text' },
      { key: 'idleNs', header: 'Idle (ns)', kind: 'ns' },
      { key: 'percent', header: 'Of phase idle (%)', kind: 'percent' },
    ],
    rows,
  };
}

/** Every table of the `gaps` command, in print order (notes are `analysis.notes`, printed apart). */
export function gapsTables(analysis: GapAnalysis, top: number): DataTable[] {
  const tables = [topGapsTable(analysis, top), deviceGapTable(analysis), deviceCauseTable(analysis)];
  if (analysis.phases.length) tables.push(phaseCauseTable(analysis));
  return tables;
}
