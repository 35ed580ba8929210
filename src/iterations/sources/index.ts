import { hasNvtxRangeMatching, mostFrequentRangeTexts } from '../../load/iterationRangeReads.js';
import type { LoadedExport } from '../../load/loadedExport.js';
import { IterationError } from '../../errors.js';
import { clipRangeText, type IterationRangeSpec } from '../rangeSpec.js';
import type { Engine, IterationSource, IterationSourceId } from '../source.js';
import { collectRanges } from '../windows.js';
import type { FoundIterationRanges } from '../source.js';
import { describeSpec, nvtxRangeSource } from './nvtxRange.js';
import { trtllmCppSource } from './trtllmCpp.js';
import { trtllmPytorchSource } from './trtllmPytorch.js';
import { vllmSource } from './vllm.js';
import { sglangSource } from './sglang.js';

/** The sources tried when the user names no range, in order: the first with ranges wins. */
export const DEFAULT_ITERATION_SOURCES: readonly IterationSource[] = [trtllmPytorchSource, trtllmCppSource, vllmSource, sglangSource];

/**
 * Sources tried last, only when no default source found ranges (e.g. windows rebuilt from a
 * log's timestamps). The one place to hook a fallback in.
 */
export const FALLBACK_ITERATION_SOURCES: IterationSource[] = [];

/** The source for an explicit spec (`--iteration-range`, or a built-in kind named in code). */
export function sourceForSpec(spec: IterationRangeSpec): IterationSource {
  if (spec.kind === 'pytorch') return trtllmPytorchSource;
  if (spec.kind === 'cpp') {
    // That one C++ range name, with the C++ source's semantics.
    return { ...trtllmCppSource, findRanges: (loaded: LoadedExport) => collectRanges(loaded, trtllmCppSource, (t) => t === spec.name) };
  }
  return nvtxRangeSource(spec);
}

/**
 * Finds the NVTX ranges that mark executor iterations: the user's spec, else the first default
 * source with ranges, else a fallback source. None found is an error that says which option to pass.
 */
export function findIterationRanges(loaded: LoadedExport, spec?: IterationRangeSpec): FoundIterationRanges {
  loaded.requireContract('nvtx');
  if (spec) {
    const found = sourceForSpec(spec).findRanges(loaded);
    if (found.byPid.size === 0) throw new IterationError(`no NVTX ranges match --iteration-range ${describeSpec(spec)}${unusable(found.invalidRanges ?? 0)}`, loaded.path);
    return found;
  }
  const tried = { invalidRanges: 0 };
  const found = firstSourceWithRanges(loaded, DEFAULT_ITERATION_SOURCES, tried) ?? firstSourceWithRanges(loaded, FALLBACK_ITERATION_SOURCES, tried);
  if (found) return found;
  throw new IterationError(
    loaded.hasTable('NVTX_EVENTS')
      ? `no iteration ranges found${unusable(tried.invalidRanges)} (no range of a known family: TensorRT-LLM's '[Executor] _forward_step ...' or 'TrtGptModelInflightBatching::forwardAsync', vLLM's 'execute_...', SGLang's 'scheduler.run_batch' / 'step[...]')${frequentRanges(loaded)}; pass --iteration-range NAME or --iteration-range /regex/ naming the NVTX range that marks one iteration`
      : 'the export has no NVTX events, so iterations cannot be found; profile with `-t cuda,nvtx` (and TLLM_LLMAPI_ENABLE_NVTX=1 / an --nvtx build, or vLLM with the cuda profiler, or SGLang with SGLANG_ENABLE_NVTX_SCHEDULER=1)',
    loaded.path,
  );
}

function firstSourceWithRanges(loaded: LoadedExport, sources: readonly IterationSource[], tried: { invalidRanges: number }): FoundIterationRanges | null {
  for (const source of sources) {
    const found = source.findRanges(loaded);
    if (found.byPid.size > 0) return found;
    tried.invalidRanges += found.invalidRanges ?? 0;
  }
  return null;
}

/**
 * Found ranges as plain data (what crosses from a worker thread, which cannot carry the source's
 * functions): the source by its id, for a default source or the spec's own.
 */
export type FoundRangesData = Omit<FoundIterationRanges, 'source'> & { sourceId: IterationSourceId };

/**
 * `findIterationRanges` as plain data; null when it finds none or ranges of a fallback source
 * (registered on the calling thread, maybe not on this one): the caller then finds them itself.
 */
export function findIterationRangesData(loaded: LoadedExport, spec?: IterationRangeSpec): FoundRangesData | null {
  let found: FoundIterationRanges;
  try {
    found = findIterationRanges(loaded, spec);
  } catch (err) {
    if (err instanceof IterationError) return null;
    throw err;
  }
  if (!spec && !DEFAULT_ITERATION_SOURCES.includes(found.source)) return null;
  const { source, ...rest } = found;
  return { ...rest, sourceId: source.id };
}

/** The ranges `findIterationRangesData` gave, with their source again (the same `spec`); null when the source is not known here. */
export function foundRangesOf(data: FoundRangesData, spec?: IterationRangeSpec): FoundIterationRanges | null {
  const source = spec ? sourceForSpec(spec) : DEFAULT_ITERATION_SOURCES.find((s) => s.id === data.sourceId);
  if (!source || source.id !== data.sourceId) return null;
  const { sourceId: _, ...rest } = data;
  return { ...rest, source };
}

/** `; the most frequent NVTX ranges: 'a' (120), 'b' (40)`: names the user may pass; empty without ranges. */
function frequentRanges(loaded: LoadedExport): string {
  const top = mostFrequentRangeTexts(loaded, 5);
  if (top.length === 0) return '; the export has no NVTX ranges';
  const quote = (t: string) => JSON.stringify(clipRangeText(t, 80));
  return `; the most frequent NVTX ranges: ${top.map((r) => `${quote(r.text)} (${r.count})`).join(', ')}`;
}

/** ` (12 matching ranges have ... and were left out)` when matches were left out for their times. */
function unusable(n: number): string {
  return n ? ` (${n} matching range${n > 1 ? 's have' : ' has'} a NULL, non-integer, end-before-start or beyond-2^53 time and ${n > 1 ? 'were' : 'was'} left out)` : '';
}

/** Which engine's iteration markers the export carries (the first default source with ranges); null when none. */
export function detectEngine(loaded: LoadedExport): { engine: Engine; source: IterationSource['id'] } | null {
  for (const source of DEFAULT_ITERATION_SOURCES) {
    const has = source.matchesText ? hasNvtxRangeMatching(loaded, source.matchesText) : source.findRanges(loaded).byPid.size > 0;
    if (has) return { engine: source.engine, source: source.id };
  }
  return null;
}
