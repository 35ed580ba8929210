import { selectModuleMarkerRanges, selectStringIdsWithPrefix } from '../../queries/moduleMarkers.js';
import { forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import type { LoadedExport } from './loadedExport.js';
import { TORCH_MODULE_PREFIX } from '../kineto/convert/eventWriter.js';
import { holdingEveryRow, isNvtxRange, type NvtxColumns } from './nvtxEventColumns.js';

/**
 * The text every module-marker range starts with: SGLang's and vLLM's layerwise NVTX both push
 * `"{}".format(marker_dict)` with `Module` the first key (vLLM vllm/utils/nvtx_pytorch_hooks.py,
 * `construct_marker_dict_and_push`, which SGLang's PytHooks copies).
 */
export const MODULE_MARKER_PREFIX = "{'Module': ";

/**
 * Every prefix a module range's text starts with: the layerwise NVTX dict repr, and the PyTorch
 * profiler's module spans (`nn.Module: DecoderLayer_3`, written as ranges by the Kineto conversion).
 */
export const MODULE_MARKER_PREFIXES: readonly string[] = [MODULE_MARKER_PREFIX, TORCH_MODULE_PREFIX];
const isModuleText = (t: string) => MODULE_MARKER_PREFIXES.some((p) => t.startsWith(p));

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
 * The module-marker ranges of the export: from NVTX columns a part already holds (`columns`: the
 * host-cause rows, every range with a thread but the GIL holds; else the shared NVTX columns when
 * they hold every row), else by query (an export without markers costs one scan of NVTX_EVENTS).
 */
export function readModuleMarkerRanges(loaded: LoadedExport, columns?: NvtxColumns): ModuleMarkerRows {
  if (!loaded.hasTable('NVTX_EVENTS')) return fromRows([]);
  const cols = columns ?? holdingEveryRow(loaded.sharedNvtx());
  if (cols) {
    const wanted = cols.texts.map(isModuleText);
    const rows: [number, number, number, number, string][] = [];
    if (!wanted.includes(true)) return fromRows(rows);
    for (let i = 0; i < cols.count; i++) {
      const t = cols.text[i];
      if (t < 0 || !wanted[t] || !isNvtxRange(cols.eventType[i]) || Number.isNaN(cols.end[i]) || cols.tid[i] < 0) continue;
      rows.push([cols.pid[i], cols.tid[i], cols.start[i], cols.end[i], cols.texts[t]]);
    }
    return fromRows(rows);
  }
  const h = loaded.handle;
  const hasTextId = h.hasColumn('NVTX_EVENTS', 'textId') && h.hasTable('StringIds');
  const textIds: number[] = [];
  if (hasTextId) forEachRow(h, selectStringIdsWithPrefix(h, MODULE_MARKER_PREFIXES), (id: number) => textIds.push(id));
  const q = selectModuleMarkerRanges(h, { prefixes: MODULE_MARKER_PREFIXES, textIds, hasTextId, hasText: h.hasColumn('NVTX_EVENTS', 'text') });
  const registered = textIds.length ? loadStrings(h, textIds) : new Map<number, string>();
  const rows: [number, number, number, number, string][] = [];
  forEachRow(h, q, (pid: number, tid: number, start: number, end: number, text: string | null, textId: number | null) => {
    // A registered string wins over inline text, as coalesce(StringIds.value, text) does.
    const value = (textId !== null ? registered.get(textId) : undefined) ?? text;
    if (value !== null && isModuleText(value)) rows.push([pid, tid, start, end, value]);
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
