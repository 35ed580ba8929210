import { displayCell } from './cells.js';
import { collapseColumnGroups } from './collapseColumns.js';
import { oneLine } from './controlChars.js';
import { humanHeader, isNumericKind, type DataTable } from './table.js';

/**
 * Escapes text for a Markdown table cell: `|` and line breaks (`\n`, a bare `\r`, any control
 * character: see controlChars.ts) would break the row, and `<` would start an HTML tag on GitHub
 * (`at::native::<unnamed>` would lose `<unnamed>`).
 */
export function mdEscape(text: string): string {
  return oneLine(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '\\<');
}

/** One table as GitHub-flavoured Markdown; numbers right-aligned, in human units. */
export function tableToMarkdown(full: DataTable, headingLevel = 3): string {
  const table = collapseColumnGroups(full);
  const out: string[] = [];
  if (table.title) out.push(`${'#'.repeat(headingLevel)} ${mdEscape(table.title)}`, '');
  out.push(`| ${table.columns.map((c) => mdEscape(humanHeader(c))).join(' | ')} |`);
  out.push(`| ${table.columns.map((c) => (isNumericKind(c.kind) ? '---:' : '---')).join(' | ')} |`);
  for (const row of table.rows) {
    out.push(`| ${table.columns.map((c) => mdEscape(displayCell(row[c.key], c))).join(' | ')} |`);
  }
  if (table.notes?.length) out.push('', ...table.notes.map((n) => `> ${mdEscape(n)}`));
  return out.join('\n') + '\n';
}

export function tablesToMarkdown(tables: DataTable[], headingLevel = 3): string {
  return tables.map((t) => tableToMarkdown(t, headingLevel)).join('\n');
}
