import { rawCell } from './cells.js';
import type { DataTable } from './table.js';

/** RFC 4180 field: quoted when it holds a comma, a quote, CR or LF; quotes doubled. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One table as CSV (header row + rows, `\n` line ends, raw ns values). */
export function tableToCsv(table: DataTable): string {
  const lines = [table.columns.map((c) => csvField(c.header)).join(',')];
  for (const row of table.rows) {
    lines.push(table.columns.map((c) => csvField(rawCell(row[c.key], c.kind))).join(','));
  }
  return lines.join('\n') + '\n';
}

/** Several tables: each after a `# title` line, separated by a blank line. One table: plain CSV. */
export function tablesToCsv(tables: DataTable[]): string {
  if (tables.length === 1) return tableToCsv(tables[0]);
  return tables.map((t) => (t.title ? `# ${t.title}\n` : '') + tableToCsv(t)).join('\n');
}
