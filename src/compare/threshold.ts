import { UsageError } from '../errors.js';

/** `--threshold 5%` (or a fraction such as `0.05`) as a fraction. A bare `5` is ambiguous: refused. */
export function parseThreshold(value: string, option = '--threshold'): number {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$/.exec(value);
  if (!m) throw new UsageError(`${option}: expected a percentage such as 5% (got '${value}')`);
  const num = Number(m[1]);
  if (m[2] === '%') return num / 100;
  if (num <= 1) return num;
  throw new UsageError(`${option}: '${value}' is ambiguous; write ${value}% or a fraction such as 0.05`);
}
