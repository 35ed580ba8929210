/**
 * Chrome trace-event JSON, one event per string (see /work/shared/research/anchors.md §1.5).
 *
 * Times: nsys stores ns from session start; trace events want microseconds, written as the exact
 * decimal `ns / 1000` (see `usText`), so the file keeps ns precision. There is deliberately no
 * `displayTimeUnit`: Perfetto's JSON importer reads `"displayTimeUnit":"ns"` as the unit of
 * `ts`/`dur` (1000x off), unlike chrome://tracing, which only uses it for display.
 */

/**
 * Session ns as trace-event microseconds in JSON number text, built from integers: `20031.783`, `20031.780`, `20031`. Exact
 * for any non-negative safe-integer ns, and about twice as fast as printing the float (it runs
 * twice per GPU op). Anything else falls back to `ns / 1000`.
 */
export function usText(ns: number): string {
  if (!Number.isSafeInteger(ns) || ns < 0) return num(typeof ns === 'number' ? ns / 1000 : ns);
  const q = Math.floor(ns / 1000);
  const r = ns - q * 1000;
  return r === 0 ? String(q) : r < 10 ? `${q}.00${r}` : r < 100 ? `${q}.0${r}` : `${q}.${r}`;
}

/** A JSON string literal (escapes quotes, backslashes, control characters, lone surrogates). */
export function str(s: string): string {
  return JSON.stringify(s);
}

/**
 * A value read from an export, as JSON text where a number is expected: a finite number as is,
 * a bigint as a decimal string (JSON numbers lose precision beyond 2^53), NaN/Infinity and
 * missing values as null, anything else (text in a damaged export's integer column) as a JSON
 * string. Never spliced raw: export content cannot add keys or events to the file.
 */
export function num(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'bigint') return `"${v}"`;
  if (v == null) return 'null';
  return JSON.stringify(typeof v === 'string' ? v : String(v));
}

export type MetadataName = 'process_name' | 'process_sort_index' | 'thread_name' | 'thread_sort_index';

/** `M` event: a process or thread name or sort index (`args.name` / `args.sort_index`). */
export function metadataEvent(name: MetadataName, pid: number, tid: number | null, value: string | number): string {
  const arg = typeof value === 'string' ? `"name":${str(value)}` : `"sort_index":${num(value)}`;
  return `{"ph":"M","name":"${name}","pid":${num(pid)}${tid === null ? '' : `,"tid":${num(tid)}`},"args":{${arg}}}`;
}

export interface CompleteEvent {
  pid: number;
  tid: number;
  startNs: number;
  endNs: number;
  name: string;
  cat: string;
  /** A reserved trace-viewer colour name (see colors.ts). */
  cname?: string;
  args?: Record<string, unknown>;
}

/** `X` event: a slice with `ts` and `dur` in microseconds. */
export function completeEvent(e: CompleteEvent): string {
  return (
    `{"ph":"X","pid":${num(e.pid)},"tid":${num(e.tid)},"ts":${usText(e.startNs)},"dur":${usText(e.endNs - e.startNs)},"name":${str(e.name)},"cat":${str(e.cat)}` +
    (e.cname ? `,"cname":${str(e.cname)}` : '') +
    (e.args ? `,"args":${JSON.stringify(e.args)}` : '') +
    '}'
  );
}

/**
 * `C` event: one sample of a counter track. Each key of `args` is a series; Perfetto names the
 * track `<name> <key>`, chrome://tracing shows `<name>` with the key as its series.
 */
export function counterEvent(pid: number, tid: number, ns: number, name: string, series: Record<string, number>): string {
  return `{"ph":"C","pid":${num(pid)},"tid":${num(tid)},"ts":${usText(ns)},"name":${str(name)},"args":${JSON.stringify(series)}}`;
}
