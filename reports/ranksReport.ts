import type { CrossRankView } from '../src/ranks/crossRank.js';
import type { TableColumn, DataTable } from './table.js';

/** Per-rank columns in the iteration table up to this many ranks (beyond: `--detail`). */
export const MAX_RANK_COLUMNS = 8;

/** One row per iteration (present on every rank): busy spread, straggler, collective time and wait. */
export function crossRankTable(view: CrossRankView): DataTable {
  const perRank = view.ranks.length <= MAX_RANK_COLUMNS ? view.ranks.map((r) => r.rank) : [];
  const columns: TableColumn[] = [
    { key: 'iter', header: 'Iter', kind: 'int' },
    { key: 'straggler', header: 'Straggler', kind: 'int' },
    { key: 'stragglerBasis', header: 'Basis', kind: 'text' },
    { key: 'gpuBusyMinNs', header: 'GPU busy min (ns)', kind: 'ns' },
    { key: 'gpuBusyMaxNs', header: 'GPU busy max (ns)', kind: 'ns' },
    { key: 'gpuBusySpreadNs', header: 'GPU busy spread (ns)', kind: 'ns' },
    { key: 'communicationMinNs', header: 'Comm min (ns)', kind: 'ns' },
    { key: 'communicationMaxNs', header: 'Comm max (ns)', kind: 'ns' },
    { key: 'maxCollectiveWaitNs', header: 'Wait max (ns)', kind: 'ns' },
    { key: 'totalCollectiveWaitNs', header: 'Wait total (ns)', kind: 'ns' },
    ...perRank.map((r) => ({ key: `wait:${r}`, header: `Wait r${r} (ns)`, kind: 'ns' }) as TableColumn),
  ];
  const rows = view.iterations.map((it) => {
    const row: DataTable['rows'][number] = {
      iter: it.iter,
      straggler: it.straggler,
      stragglerBasis: it.stragglerBasis,
      gpuBusyMinNs: it.gpuBusyMinNs,
      gpuBusyMaxNs: it.gpuBusyMaxNs,
      gpuBusySpreadNs: it.gpuBusySpreadNs,
      communicationMinNs: it.communicationMinNs,
      communicationMaxNs: it.communicationMaxNs,
      maxCollectiveWaitNs: it.maxCollectiveWaitNs,
      totalCollectiveWaitNs: it.totalCollectiveWaitNs,
    };
    if (perRank.length) for (const c of it.ranks) row[`wait:${c.rank}`] = c.collectiveWaitNs;
    return row;
  });
  return { title: `Cross-rank view: ${view.iterations.length} iterations on ${view.ranks.length} ranks`, columns, rows, notes: view.notes };
}

/** One row per rank: means over the aligned iterations and how often it was the straggler. */
export function rankTotalsTable(view: CrossRankView): DataTable {
  return {
    title: 'Per rank (means over the aligned iterations)',
    columns: [
      { key: 'rank', header: 'Rank', kind: 'int' },
      { key: 'file', header: 'File', kind: 'text' },
      { key: 'pid', header: 'PID', kind: 'int' },
      { key: 'iterations', header: 'Iterations', kind: 'int' },
      { key: 'stragglerIterations', header: 'Straggler in', kind: 'int' },
      { key: 'meanGpuBusyNs', header: 'GPU busy (ns)', kind: 'ns' },
      { key: 'meanCommunicationNs', header: 'Comm (ns)', kind: 'ns' },
      { key: 'meanComputeNs', header: 'Compute (ns)', kind: 'ns' },
      { key: 'meanCollectiveWaitNs', header: 'Wait (ns)', kind: 'ns' },
      { key: 'totalCollectiveWaitNs', header: 'Wait total (ns)', kind: 'ns' },
    ],
    rows: view.ranks.map((r) => ({ ...r })) as unknown as DataTable['rows'],
  };
}

/** `--detail`: one row per iteration and rank. */
export function rankDetailTable(view: CrossRankView): DataTable {
  return {
    title: 'Per iteration and rank',
    columns: [
      { key: 'iter', header: 'Iter', kind: 'int' },
      { key: 'rank', header: 'Rank', kind: 'int' },
      { key: 'gpuBusyNs', header: 'GPU busy (ns)', kind: 'ns' },
      { key: 'kernelNs', header: 'Kernel (ns)', kind: 'ns' },
      { key: 'communicationNs', header: 'Comm (ns)', kind: 'ns' },
      { key: 'computeNs', header: 'Compute (ns)', kind: 'ns' },
      { key: 'collectiveWaitNs', header: 'Wait (ns)', kind: 'ns' },
      { key: 'arrivalLagNs', header: 'Arrival lag (ns)', kind: 'ns' },
      { key: 'straggler', header: 'Straggler', kind: 'text' },
    ],
    rows: view.iterations.flatMap((it) => it.ranks.map((c) => ({ iter: it.iter, ...c, straggler: c.rank === it.straggler ? 'yes' : '' }))),
  };
}

export function crossRankTables(view: CrossRankView, opts: { detail?: boolean } = {}): DataTable[] {
  return [crossRankTable(view), rankTotalsTable(view), ...(opts.detail ? [rankDetailTable(view)] : [])];
}

/**
 * Several ranks' tables of the same kinds stacked into one table per kind, with a Rank column
 * first: columns are the union in first-seen order (a rank lacking a column gets empty cells).
 * `titles[j]` replaces the j-th table's title (default: the first rank's).
 */
export function stackRankTables(perRank: readonly { rank: number; tables: DataTable[] }[], titles: (string | undefined)[] = []): DataTable[] {
  const kinds = Math.max(0, ...perRank.map((p) => p.tables.length));
  const out: DataTable[] = [];
  for (let j = 0; j < kinds; j++) {
    const columns: TableColumn[] = [{ key: '__rank', header: 'Rank', kind: 'int' }];
    const seen = new Set<string>();
    const rows: DataTable['rows'] = [];
    let title: string | undefined;
    for (const { rank, tables } of perRank) {
      const t = tables[j];
      if (!t) continue;
      title ??= t.title;
      for (const c of t.columns) {
        if (!seen.has(c.key)) {
          seen.add(c.key);
          columns.push(c);
        }
      }
      for (const r of t.rows) rows.push({ __rank: rank, ...r });
    }
    out.push({ title: titles[j] ?? title, columns, rows });
  }
  return out;
}
