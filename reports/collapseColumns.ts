import type { Cell, TableColumn, DataTable } from './table.js';

/** Columns of a group kept by the Markdown and terminal writers; the rest become one `other` column. */
export const GROUP_COLUMNS_SHOWN = 5;

const num = (v: Cell) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);

/**
 * Narrows a table for people: in each column group with more than `keep + 1` columns, the `keep`
 * columns with the largest totals (over all rows, i.e. by share) stay in place and the others are
 * summed into one `other <group>` column where the group's last column stood. Rows are not
 * changed in place.
 */
export function collapseColumnGroups(table: DataTable, keep = GROUP_COLUMNS_SHOWN): DataTable {
  const groups = new Map<string, TableColumn[]>();
  for (const c of table.columns) if (c.group) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
  let out = table;
  for (const [group, cols] of groups) {
    if (cols.length <= keep + 1) continue;
    const total = (c: TableColumn) => out.rows.reduce((a, r) => a + Math.abs(num(r[c.key])), 0);
    const ranked = [...cols].sort((a, b) => total(b) - total(a));
    const dropped = new Set(ranked.slice(keep).map((c) => c.key));
    const otherKey = `other:${group}`;
    const last = cols[cols.length - 1].key;
    const columns: TableColumn[] = [];
    for (const c of out.columns) {
      if (!dropped.has(c.key)) columns.push(c);
      if (c.key === last) columns.push({ key: otherKey, header: `other ${group} (${dropped.size})`, kind: cols[0].kind });
    }
    const rows = out.rows.map((r) => {
      let sum = 0;
      let any = false;
      for (const k of dropped) {
        if (r[k] === null || r[k] === undefined || r[k] === '') continue;
        any = true;
        sum += num(r[k]);
      }
      return { ...r, [otherKey]: any ? sum : null };
    });
    const note = `${dropped.size} smaller ${group} summed as "other ${group}" (${[...dropped].map((k) => cols.find((c) => c.key === k)!.header.replace(/ (mean )?\(ns\)$/, '')).join(', ')}); CSV, JSON and HTML list every column`;
    out = { ...out, columns, rows, notes: [...(out.notes ?? []), note] };
  }
  return out;
}
