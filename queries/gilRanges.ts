import type { ExportHandle } from './handle.js';

/** One `GIL Trace` range: a wait of an executor thread, or a hold of another thread. */
export interface GilRangeRow {
  pid: number;
  tid: number;
  /** 1: `Waiting for GIL`, 0: `Holding GIL`. */
  wait: number;
  start: number;
  end: number | null;
}

/**
 * `Waiting for GIL` ranges of the given executor threads and `Holding GIL` ranges of every OTHER
 * thread of those processes. The executor's own `Holding GIL` rows (most of a GIL-traced export)
 * are dropped by the first test, on integers only. Domain filtering (the `GIL Trace` domain) is
 * left to the caller, which knows the domain ids per process.
 */
export function selectGilRanges(handle: ExportHandle, executors: readonly { pid: number; tid: number }[]): (GilRangeRow & { domainId: number })[] {
  if (!handle.hasTable('NVTX_EVENTS') || executors.length === 0) return [];
  const hasTextId = handle.hasColumn('NVTX_EVENTS', 'textId') && handle.hasTable('StringIds');
  const hasText = handle.hasColumn('NVTX_EVENTS', 'text');
  const ids = new Map<string, number[]>([
    ['Waiting for GIL', []],
    ['Holding GIL', []],
  ]);
  if (hasTextId) {
    for (const r of handle.sqlite.prepare("SELECT id, value FROM StringIds WHERE value IN ('Waiting for GIL', 'Holding GIL')").all() as { id: number; value: string }[]) ids.get(r.value)!.push(r.id);
  }
  const waitIds = ids.get('Waiting for GIL')!;
  const holdIds = ids.get('Holding GIL')!;
  // Integer lists inline as bound placeholders (`IN (?, ?)`): cheaper per row than a json_each
  // subquery on the millions of `Holding GIL` rows of a long capture.
  const list = (n: number) => `(${new Array(n).fill('?').join(', ')})`;
  const isName = (idList: number[], name: string) => {
    const parts: string[] = [];
    if (hasTextId && idList.length) parts.push(`textId IN ${list(idList.length)}`);
    if (hasText) parts.push('text = ?');
    return { sql: parts.length ? `(${parts.join(' OR ')})` : '0', params: [...(hasTextId && idList.length ? idList : []), ...(hasText ? [name] : [])] };
  };
  const wait = isName(waitIds, 'Waiting for GIL');
  const hold = isName(holdIds, 'Holding GIL');
  const keys = executors.map((e) => e.pid * 16777216 + e.tid);
  const pids = [...new Set(executors.map((e) => e.pid))];
  const key = '(((globalTid >> 24) & 16777215) * 16777216 + (globalTid & 16777215))';
  return handle.sqlite
    .prepare(
      `SELECT (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid, coalesce(domainId, 0) AS domainId,
              ${wait.sql} AS wait, start, "end"
       FROM NVTX_EVENTS
       WHERE eventType IN (59, 60, 70, 71)
         AND ((${hold.sql} AND ${key} NOT IN ${list(keys.length)} AND ((globalTid >> 24) & 16777215) IN ${list(pids.length)})
              OR (${wait.sql} AND ${key} IN ${list(keys.length)}))`,
    )
    .all(...wait.params, ...hold.params, ...keys, ...pids, ...wait.params, ...keys) as (GilRangeRow & { domainId: number })[];
}

/** Thread names (`ThreadNames` + `StringIds`) of the given processes, by `pid * 2^24 + tid`. */
export function selectThreadNames(handle: ExportHandle, pids: readonly number[]): Map<number, string> {
  const out = new Map<number, string>();
  if (!handle.hasTable('ThreadNames') || !handle.hasTable('StringIds') || pids.length === 0) return out;
  const rows = handle.sqlite
    .prepare(
      `SELECT (t.globalTid >> 24) & 16777215 AS pid, t.globalTid & 16777215 AS tid, s.value AS name
       FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId
       WHERE ((t.globalTid >> 24) & 16777215) IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify([...pids])) as { pid: number; tid: number; name: string }[];
  for (const r of rows) out.set(r.pid * 16777216 + r.tid, r.name);
  return out;
}
