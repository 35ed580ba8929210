/**
 * The data model every writer renders: a titled table of typed columns. Analyses return plain
 * data; small pure functions in `reports/` turn that data into `DataTable`s, and the writers
 * (csv, markdown, terminal) turn tables into text.
 */

/**
 * How a column's values are printed.
 * - `text`: as is;
 * - `int`: an integer count;
 * - `ns`: a duration or timestamp in ns (raw in CSV/JSON, human units in table/Markdown);
 * - `decimal1`: one decimal place everywhere (nsys's Avg/Med/StdDev columns);
 * - `percent`: a percentage with one decimal place;
 * - `float`: a plain number (up to 4 significant decimals in table/Markdown).
 */
export type ColumnKind = 'text' | 'int' | 'ns' | 'decimal1' | 'percent' | 'float';

export interface TableColumn {
  /** Property of each row object. */
  key: string;
  /** Header as printed (CSV headers match `nsys stats` where the report mirrors one). */
  header: string;
  kind: ColumnKind;
  /**
   * Columns of one family (`categories`): Markdown and terminal tables keep the largest few and
   * sum the rest into one `other <group>` column; CSV, JSON and HTML keep every column.
   */
  group?: string;
  /** `kernel-name`: Markdown, terminal and HTML print `shortKernelName` (HTML: full name on hover); CSV/JSON the full name. */
  display?: 'kernel-name';
}

export type Cell = string | number | bigint | boolean | null | undefined;

export interface DataTable {
  title?: string;
  columns: TableColumn[];
  rows: Record<string, Cell>[];
  /** Lines printed under the table (coverage, caveats). Not part of CSV output. */
  notes?: string[];
}

export type OutputFormat = 'table' | 'csv' | 'md' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'csv', 'md', 'json'];

export function isNumericKind(kind: ColumnKind): boolean {
  return kind !== 'text';
}

/** A two-column Field/Value table (run facts, settings). */
export function keyValueTable(title: string, pairs: [string, string][]): DataTable {
  return {
    title,
    columns: [
      { key: 'field', header: 'Field', kind: 'text' },
      { key: 'value', header: 'Value', kind: 'text' },
    ],
    rows: pairs.map(([field, value]) => ({ field, value })),
  };
}

/**
 * The header people see over human-unit cells: `Wall (ns)` over `9.85 ms` would lie, so the unit
 * suffix of an `ns` column is dropped (CSV keeps it: its cells are raw ns).
 */
export function humanHeader(column: TableColumn): string {
  return column.kind === 'ns' ? column.header.replace(/ \(ns\)$/, '') : column.header;
}
