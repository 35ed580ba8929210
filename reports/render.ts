import { tablesToCsv } from './csv.js';
import { toJson } from './json.js';
import { tablesToMarkdown } from './markdown.js';
import { tablesToTerminal } from './terminal.js';
import type { DataTable, OutputFormat } from './table.js';

/**
 * Renders a command's result. JSON prints the analysis data itself (the library's return value,
 * camelCase); the other formats print its tables.
 */
export function render(format: OutputFormat, tables: DataTable[], data: unknown): string {
  switch (format) {
    case 'json':
      return toJson(data);
    case 'csv':
      return tablesToCsv(tables);
    case 'md':
      return tablesToMarkdown(tables);
    case 'table':
      return tablesToTerminal(tables);
  }
}
