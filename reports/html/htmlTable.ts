import { displayCell, humanCell } from '../cells.js';
import { humanHeader, isNumericKind, type DataTable } from '../table.js';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The full text as a tooltip when the cell shows a shortened kernel name. */
function hover(value: DataTable['rows'][number][string], column: DataTable['columns'][number]): string {
  if (column.display !== 'kernel-name') return '';
  const full = humanCell(value, column.kind);
  return full !== displayCell(value, column) ? ` title="${escapeHtml(full)}"` : '';
}

/**
 * One table as HTML: cells printed by `humanCell` (the same text as the Markdown and terminal
 * writers), numeric columns right-aligned, the title as caption and notes under the table.
 */
export function tableToHtml(table: DataTable): string {
  const head = table.columns.map((c) => `<th${isNumericKind(c.kind) ? ' class="num"' : ''}>${escapeHtml(humanHeader(c))}</th>`).join('');
  const body = table.rows
    .map((row) => `<tr>${table.columns.map((c) => `<td${isNumericKind(c.kind) ? ' class="num"' : ''}${hover(row[c.key], c)}>${escapeHtml(displayCell(row[c.key], c))}</td>`).join('')}</tr>`)
    .join('\n');
  const caption = table.title ? `<caption>${escapeHtml(table.title)}</caption>` : '';
  const notes = table.notes?.length ? `\n${table.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('\n')}` : '';
  return `<div class="table-wrap"><table>${caption}<thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>${notes}`;
}
