import { selectModuleMarkerRanges } from '../../queries/moduleMarkers.js';
import { forEachRow } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';
import { holdingEveryRow, isNvtxRange } from './nvtxEventColumns.js';

/**
 * The text every module-marker range starts with: SGLang's and vLLM's layerwise NVTX both push
 * `"{}".format(marker_dict)` with `Module` the first key (vLLM vllm/utils/nvtx_pytorch_hooks.py,
 * `construct_marker_dict_and_push`, which SGLang's PytHooks copies).
 */
export const MODULE_MARKER_PREFIX = "{'Module': ";

/** Closed module-marker ranges, in columns (any order: the caller sorts per thread). */
export interface ModuleMarkerRows {
  count: number;
  pid: Int32Array;
  tid: Int32Array;
  start: Float64Array;
  end: Float64Array;
  /** Index into `texts`. */
  text: Int32Array;
  texts: string[];
}

/**
 * The module-marker ranges of the export: from the shared NVTX columns when they are read and
 * hold every row, else by one query (an export without markers costs a scan of NVTX_EVENTS).
 */
export function readModuleMarkerRanges(loaded: LoadedExport): ModuleMarkerRows {
  if (!loaded.hasTable('NVTX_EVENTS')) return fromRows([]);
  const cols = holdingEveryRow(loaded.sharedNvtx());
  if (cols) {
    const wanted = cols.texts.map((t) => t.startsWith(MODULE_MARKER_PREFIX));
    const rows: [number, number, number, number, string][] = [];
    for (let i = 0; i < cols.count; i++) {
      const t = cols.text[i];
      if (t < 0 || !wanted[t] || !isNvtxRange(cols.eventType[i]) || Number.isNaN(cols.end[i])) continue;
      rows.push([cols.pid[i], cols.tid[i], cols.start[i], cols.end[i], cols.texts[t]]);
    }
    return fromRows(rows);
  }
  const h = loaded.handle;
  const q = selectModuleMarkerRanges(h, {
    prefix: MODULE_MARKER_PREFIX,
    hasTextId: h.hasColumn('NVTX_EVENTS', 'textId'),
    hasText: h.hasColumn('NVTX_EVENTS', 'text'),
    hasStrings: h.hasTable('StringIds'),
  });
  const rows: [number, number, number, number, string][] = [];
  forEachRow(h, q, (pid: number, tid: number, start: number, end: number, text: string | null) => {
    if (text !== null) rows.push([pid, tid, start, end, text]);
  });
  return fromRows(rows);
}

function fromRows(rows: readonly [number, number, number, number, string][]): ModuleMarkerRows {
  const n = rows.length;
  const out: ModuleMarkerRows = { count: n, pid: new Int32Array(n), tid: new Int32Array(n), start: new Float64Array(n), end: new Float64Array(n), text: new Int32Array(n), texts: [] };
  const index = new Map<string, number>();
  rows.forEach(([pid, tid, start, end, text], i) => {
    let t = index.get(text);
    if (t === undefined) index.set(text, (t = out.texts.push(text) - 1));
    out.pid[i] = pid;
    out.tid[i] = tid;
    out.start[i] = start;
    out.end[i] = end;
    out.text[i] = t;
  });
  return out;
}
