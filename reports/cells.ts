import type { Cell, TableColumn, ColumnKind } from './table.js';
import { shortKernelName } from './kernelName.js';
import { formatDecimal1, formatFloat, formatInt, formatNs } from './units.js';

/** A cell as raw text for machine-readable output (CSV): ns and ints as digits, decimals fixed. */
export function rawCell(value: Cell, kind: ColumnKind): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return value;
  switch (kind) {
    case 'decimal1':
    case 'percent':
      return formatDecimal1(value);
    case 'int':
    case 'ns':
      return Number.isInteger(value) ? String(value) : formatDecimal1(value);
    default:
      return String(value);
  }
}

/** A cell as people read it (terminal table, Markdown): durations in ns/us/ms/s, percents with %. */
export function humanCell(value: Cell, kind: ColumnKind): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  switch (kind) {
    case 'ns':
      return formatNs(value);
    case 'int':
      return formatInt(value);
    case 'decimal1':
      return formatDecimal1(Number(value));
    case 'percent':
      return `${formatDecimal1(Number(value))}%`;
    case 'float':
      return formatFloat(Number(value));
    default:
      return String(value);
  }
}

/** A cell as the human-readable writers print it under `column` (kernel names shortened). */
export function displayCell(value: Cell, column: TableColumn): string {
  const text = humanCell(value, column.kind);
  return column.display === 'kernel-name' ? shortKernelName(text) : text;
}
