/**
 * Wall-clock timestamps as TensorRT-LLM writes them, parsed as LOCAL time (the producers use
 * `datetime.now()` / `localtime`, not UTC). Joining to nsys needs an explicit clock offset; this
 * only turns the text into a number.
 *
 * Accepted forms (all fully anchored, nothing else):
 * - `%m-%d-%Y %H:%M:%S.%f`  stats JSON `timestamp`, e.g. `04-07-2025 20:33:17.747028`
 * - `%m-%d-%Y %H:%M:%S`     legacy GptManager `Timestamp`, e.g. `12-13-2023 14:55:14`
 * - `%Y-%m-%d %H:%M:%S`     PyTorch text log `timestamp`, e.g. `2026-11-20 23:07:42`
 *   (an optional `.%f` is accepted here too)
 */

const MDY_RE = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;
const YMD_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

/** Milliseconds since the Unix epoch (local time), with any sub-ms fraction kept; null if not a valid timestamp. */
export function parseLogTimestamp(text: string): number | null {
  const s = text.trim();
  let m = MDY_RE.exec(s);
  if (m) return localMs(+m[3], +m[1], +m[2], +m[4], +m[5], +m[6], m[7]);
  m = YMD_RE.exec(s);
  if (m) return localMs(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6], m[7]);
  return null;
}

/** The wall-clock fields of a log timestamp, before any time zone is applied. */
export interface LogTimestampFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** The digits after the decimal point as written ('' when none). */
  fraction: string;
}

/** The fields of a timestamp in one of the accepted forms; null if not a valid timestamp. */
export function parseLogTimestampFields(text: string): LogTimestampFields | null {
  const s = text.trim();
  let f: LogTimestampFields | null = null;
  let m = MDY_RE.exec(s);
  if (m) f = { year: +m[3], month: +m[1], day: +m[2], hour: +m[4], minute: +m[5], second: +m[6], fraction: m[7] ?? '' };
  else if ((m = YMD_RE.exec(s))) f = { year: +m[1], month: +m[2], day: +m[3], hour: +m[4], minute: +m[5], second: +m[6], fraction: m[7] ?? '' };
  if (!f || f.month < 1 || f.month > 12 || f.day < 1 || f.hour > 23 || f.minute > 59 || f.second > 59) return null;
  const d = new Date(Date.UTC(f.year, f.month - 1, f.day));
  if (d.getUTCFullYear() !== f.year || d.getUTCMonth() !== f.month - 1 || d.getUTCDate() !== f.day) return null;
  return f;
}

function localMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  fraction: string | undefined,
): number | null {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(year, month - 1, day, hour, minute, second);
  // Date rolls 02-30 over into March; a real log never writes that, so reject it.
  if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day) return null;
  const fractionMs = fraction ? Number(`0.${fraction}`) * 1000 : 0;
  return date.getTime() + fractionMs;
}
