/**
 * What a Kineto event is, across the PyTorch versions that wrote it: its category (PyTorch 1.8
 * wrote `Operator`, `Runtime`, `Kernel`, `Memcpy`, `Memset`; later ones `cpu_op`, `cuda_runtime`,
 * `kernel`, `gpu_memcpy`, `gpu_memset`, ...), and ids written as numbers or as text (`"tid":
 * "24610"`, a GPU lane `"tid": "stream 7"`). Sources: pytorch/kineto tb_plugin
 * `torch_tb_profiler/profiler/trace.py` (EventTypeMap: categories matched lower-cased, old and new
 * names side by side) and the traces in test/fixtures-field/.
 */

/** What the conversion makes of an event. */
export type EventKind = 'cpuOp' | 'annotation' | 'runtime' | 'driver' | 'kernel' | 'memcpy' | 'memset';

/** Converted categories, lower-cased, by kind. */
const CONVERTED: ReadonlyMap<string, EventKind> = new Map([
  ['cpu_op', 'cpuOp'],
  ['operator', 'cpuOp'],
  ['user_annotation', 'annotation'],
  ['cuda_runtime', 'runtime'],
  ['runtime', 'runtime'],
  ['cuda_driver', 'driver'],
  ['kernel', 'kernel'],
  ['gpu_memcpy', 'memcpy'],
  ['memcpy', 'memcpy'],
  ['gpu_memset', 'memset'],
  ['memset', 'memset'],
]);

/**
 * Kineto's other categories (lower-cased): recognised as a PyTorch profiler trace's, not converted
 * (Python frames, flows, the profiler's own spans and instants, GPU-side copies of annotations,
 * synchronisation records, memory events).
 */
const RECOGNISED_ONLY: ReadonlySet<string> = new Set([
  'python_function',
  'python',
  'ac2g',
  'async',
  'trace',
  'cpu_instant_event',
  'overhead',
  'gpu_user_annotation',
  'cuda_sync',
  'cuda_profiler_range',
  'memory',
  'fwdbwd',
  'external_correlation',
  'xpu_runtime',
  'mtia_runtime',
  'privateuse1_runtime',
]);

/** The kind of a category; null: Kineto's but not converted; undefined: not Kineto's. */
export function kindOfCategory(cat: string): EventKind | null | undefined {
  // Today's names are lower case already: no lower-cased copy per event for them.
  const kind = CONVERTED.get(cat);
  if (kind) return kind;
  if (RECOGNISED_ONLY.has(cat)) return null;
  const c = cat.toLowerCase();
  if (c === cat) return undefined;
  return CONVERTED.get(c) ?? (RECOGNISED_ONLY.has(c) ? null : undefined);
}

/** A pid/tid/id as a number: a JSON number, or text of digits (`"24610"`); null otherwise. */
export function numericId(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

/** A GPU lane's stream: `"tid": 7` or `"tid": "stream 7"` (PyTorch 1.8); null otherwise. */
export function streamOfTid(tid: unknown): number | null {
  if (typeof tid === 'string') {
    const m = /^stream (\d+)/.exec(tid);
    if (m) return Number(m[1]);
  }
  return numericId(tid);
}

/** Below 2^43 µs, a double's fraction is exact to well under half a ns (see `microsToNs`). */
const EXACT_FRACTION_US = 2 ** 43;

/**
 * `us` in integer ns since `originUs` (whole µs): `microsToNs` without the object (called twice
 * per event).
 */
export function nsSince(us: number, originUs: number): number {
  const a = us < 0 ? -us : us;
  if (a >= EXACT_FRACTION_US) {
    const t = microsToNs(us);
    return (t.whole - originUs) * 1000 + t.fracNs;
  }
  let whole = Math.floor(a);
  let frac = Math.round((a - whole) * 1000);
  if (frac === 1000) {
    whole += 1;
    frac = 0;
  }
  return us < 0 ? (-whole - originUs) * 1000 - frac : (whole - originUs) * 1000 + frac;
}

/**
 * Exact integer ns of a Kineto time in µs, as whole µs and ns. Kineto writes 3 decimals; the
 * double nearest to that text is within half an ulp, which below 2^43 µs is under 0.5 ns, so
 * rounding the double's own fraction (exact: `us - floor(us)`) gives the written digits. Above,
 * the shortest decimal form of the double (the text Kineto wrote, when it round-trips) is read.
 * `ts * 1000` in doubles can be 1 ns off at today's magnitudes, so it is never used.
 */
export function microsToNs(us: number): { whole: number; fracNs: number } {
  const neg = us < 0;
  const a = neg ? -us : us;
  let whole: number;
  let fracNs: number;
  if (a < EXACT_FRACTION_US) {
    whole = Math.floor(a);
    fracNs = Math.round((a - whole) * 1000);
  } else {
    const s = String(a);
    const dot = s.indexOf('.');
    if (dot < 0 || /e/i.test(s)) {
      whole = Math.floor(a);
      fracNs = Math.round((a - whole) * 1000);
    } else {
      whole = Number(s.slice(0, dot));
      fracNs = Math.round(Number(`0.${s.slice(dot + 1)}`) * 1000);
    }
  }
  if (fracNs === 1000) {
    whole += 1;
    fracNs = 0;
  }
  return neg ? { whole: -whole, fracNs: -fracNs } : { whole, fracNs };
}
