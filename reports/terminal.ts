import Table from 'cli-table3';
import { displayCell } from './cells.js';
import { collapseColumnGroups } from './collapseColumns.js';
import { keepNewlinesOnly, oneLine } from './controlChars.js';
import { humanHeader, isNumericKind, type DataTable } from './table.js';

/** One table for a terminal (cli-table3), numbers right-aligned in human units. */
export function tableToTerminal(full: DataTable, opts: { maxCellWidth?: number } = {}): string {
  const table = collapseColumnGroups(full);
  const max = opts.maxCellWidth ?? 80;
  // No control characters but line breaks (ESC sequences from export content would drive the terminal).
  const clip = (text: string) => {
    const s = keepNewlinesOnly(text);
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  };
  const t = new Table({
    head: table.columns.map((c) => keepNewlinesOnly(humanHeader(c))),
    colAligns: table.columns.map((c) => (isNumericKind(c.kind) ? 'right' : 'left')),
    style: { head: [], border: [], compact: true },
  });
  for (const row of table.rows) t.push(table.columns.map((c) => clip(displayCell(row[c.key], c))));
  const parts: string[] = [];
  if (table.title) parts.push(oneLine(table.title));
  parts.push(t.toString());
  if (table.notes?.length) parts.push(...table.notes.map((n) => `note: ${oneLine(n)}`));
  return parts.join('\n') + '\n';
}

export function tablesToTerminal(tables: DataTable[]): string {
  return tables.map((t) => tableToTerminal(t)).join('\n');
}
