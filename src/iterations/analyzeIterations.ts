import { busyOverlap } from '../math/busyIntervals.js';
import type { GpuOpColumns } from '../load/gpuOpColumns.js';
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import { captureSettings } from '../load/captureSettings.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { defaultCategoryClassifier } from '../categories/rules.js';
import { recordsByIter, repeatedIters } from '../logs/parse.js';
import { alignLogCounters } from './logCounters.js';
import type { MergedIterationRecord, ParsedIterationLog } from '../logs/logRecords.js';
import { attributeGpuWork, type AttributionCoverage, type GpuAttribution, type IterationWindow } from './attribute.js';
import { labelAgreesWithLog, numberWindows, numberWindowsOrCaptureOrder } from './numbering.js';
import type { Numbering } from './source.js';
import { clipRangeText, parseProfileRanges, type ProfileRange, type StepTokenDetail } from './rangeSpec.js';
import type { IterationSelection } from './selection.js';
import type { Engine, PhaseRule, StepNumbering } from './source.js';
import { findIterationRanges } from './sources/index.js';
import type { FoundIterationRanges, IterationRange, UnparsedLabels } from './source.js';
import { fallbackIterationRanges, NO_ITERATION_SOURCE_HINT } from './fallbackRanges.js';
import { IterationError } from '../errors.js';
import { phaseOf } from './phase.js';
import type { JoinedLog, IterationRow, IterationCoverage, IterationAnalysis, IterationOptions } from './types.js';
import { compactRanges } from '../formatRanges.js';

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The log records to join, by iteration, with a note per log whose iterations appear in several
 * records (`repeatedIters`): those that differ in the batch are left out, not guessed at; for
 * those that differ in other values only, the note says the last record was joined.
 */
function logRecordsToJoin(logs: readonly ParsedIterationLog[]): { records: Map<number, MergedIterationRecord>; notes: string[] } {
  const notes: string[] = [];
  const kept = logs.map((log) => {
    const { batch, values } = repeatedIters(log);
    if (values.length) notes.push(`${log.file}: iterations ${compactRanges(values)} each appear in records that differ in values other than the batch (latency, timestamp): the last record of each was joined`);
    if (batch.length === 0) return log;
    notes.push(`${log.file}: iterations ${compactRanges(batch)} each appear in records with different batch compositions (two runs appended to one file?): not joined, as which record is of this capture cannot be told`);
    const refused = new Set(batch);
    return { ...log, records: log.records.filter((r) => !refused.has(r.iter)) };
  });
  return { records: kept.length ? recordsByIter(kept) : new Map(), notes };
}

/**
 * Builds numbered windows: each from its range's start to the next range's start on the executor
 * thread. The last one takes API calls until its range ends (at least a median window's length,
 * or to the end of a profiler-gated capture) and ends when its GPU work drains.
 */
function buildWindows(ranges: IterationRange[], iters: number[], captureEndNs: number | null, gated: boolean): IterationWindow[] {
  const lengths = ranges.slice(1).map((r, i) => r.startNs - ranges[i].startNs);
  const typical = median(lengths);
  return ranges.map((r, i) => {
    const next = ranges[i + 1];
    let launchEnd: number;
    if (next) launchEnd = next.startNs;
    else if ((gated || ranges.length === 1) && captureEndNs != null) launchEnd = Math.max(captureEndNs + 1, r.rangeEndNs ?? r.startNs);
    else launchEnd = Math.max(r.rangeEndNs ?? r.startNs, r.startNs + typical);
    return { iter: iters[i], pid: r.pid, tid: r.tid, startNs: r.startNs, endNs: launchEnd, launchEndNs: launchEnd, rangeEndNs: r.rangeEndNs, text: r.text };
  });
}

/** Last end of any GPU op or CUDA API call: where a profiler-gated capture's last iteration may run to. */
function gpuActivityEnd(gpuOps: GpuOpColumns, apiCalls: ApiCallColumns): number | null {
  let max = apiCalls.count ? apiCalls.maxEndNs : -Infinity;
  for (let i = 0; i < gpuOps.count; i++) if (gpuOps.end[i] > max) max = gpuOps.end[i];
  return Number.isFinite(max) ? max : null;
}

/** Distinct DP ranks of the vLLM records in the logs (one engine core per rank, each counting its own steps). */
function dpRanksOf(logs: ParsedIterationLog[]): number[] {
  const ranks = new Set<number>();
  for (const l of logs) for (const r of l.records) if (r.format === 'vllm-iteration-details' && r.rank != null) ranks.add(r.rank);
  return [...ranks].sort((a, b) => a - b);
}

/**
 * The log fields joined to an iteration: `sources`, then the metrics in `METRIC_KEYS` order, in one
 * literal. Added key by key (24 keys), V8 turns the object into a dictionary of ~1.5 KB; a literal
 * keeps it a plain object (23 MB of the heap on the 10x bench copy's 15,000 rows, 69 MB at 30x).
 */
export function joinedLog(rec: MergedIterationRecord): JoinedLog {
  return {
    sources: rec.sources.map((s) => ({ file: s.file, line: s.line, format: s.format, sourceIter: s.sourceIter })),
    contextRequests: rec.contextRequests,
    contextTokens: rec.contextTokens,
    generationRequests: rec.generationRequests,
    generationTokens: rec.generationTokens,
    scheduledRequests: rec.scheduledRequests,
    activeRequests: rec.activeRequests,
    queuedRequests: rec.queuedRequests,
    pausedRequests: rec.pausedRequests,
    completedRequests: rec.completedRequests,
    fetchedRequests: rec.fetchedRequests,
    dummyRequests: rec.dummyRequests,
    unscheduledRequests: rec.unscheduledRequests,
    cachedKvTokens: rec.cachedKvTokens,
    kvBlocksUsed: rec.kvBlocksUsed,
    kvBlocksFree: rec.kvBlocksFree,
    kvBlocksMax: rec.kvBlocksMax,
    latencyMs: rec.latencyMs,
    hostStepTimeMs: rec.hostStepTimeMs,
    prevDeviceStepTimeMs: rec.prevDeviceStepTimeMs,
    gpuMemBytes: rec.gpuMemBytes,
    rank: rec.rank,
    timestamp: rec.timestamp,
    timestampMs: rec.timestampMs,
  };
}

/**
 * Where the windows came from: the first source with ranges, else a fallback (ProfilerStep#N, the
 * log's timestamps). Everything the iteration analysis reads of the NVTX table is in it.
 */
export interface FoundWindows {
  found: FoundIterationRanges;
  sourceNotes: string[];
  numberingDetail?: string;
}

/**
 * The ranges that mark the iterations (`findIterationRanges`), else a fallback's; none is an
 * `IterationError` that says what to pass. Reads the NVTX table (from the shared columns when they
 * are read), not the GPU ops: the pipeline finds the windows while a large NVTX table is held.
 * `ranges`: `findIterationRanges`'s answer when it was found elsewhere (the NVTX worker).
 */
export function findWindows(loaded: LoadedExport, logs: readonly ParsedIterationLog[], selection: IterationSelection = {}, ranges?: FoundIterationRanges): FoundWindows {
  try {
    return { found: ranges ?? findIterationRanges(loaded, selection.rangeSpec), sourceNotes: [] };
  } catch (err) {
    // No executor NVTX ranges: ProfilerStep#N, else the log's timestamps (Kineto traces, plain captures).
    if (!(err instanceof IterationError) || selection.rangeSpec) throw err;
    const fallback = fallbackIterationRanges(loaded, logs, selection.logTz);
    if (!fallback) throw new IterationError(`${err.message.slice(loaded.path.length + 2)}${NO_ITERATION_SOURCE_HINT}`, loaded.path);
    return { found: fallback.found, sourceNotes: fallback.notes, numberingDetail: fallback.numberingDetail };
  }
}

/** Per window, from sources that number and join their steps themselves (SGLang). */
interface OwnNumbering {
  record: MergedIterationRecord | null;
  phase: StepNumbering['phases'][number];
  cut: string | null;
  captureOrder: boolean;
}

/** Every process's windows, numbered, with the ranges they come from. */
interface NumberedWindows {
  windows: IterationWindow[];
  rangeOf: IterationRange[];
  numbering: IterationCoverage['numbering'];
  own: OwnNumbering[];
  phaseRule?: PhaseRule;
  ownNotes: string[];
  /** Processes whose windows were numbered in capture order: no number is the engine's. */
  captureOrderPids: Set<number>;
}

/** The log's batch compositions (to number unnumbered windows by), and the capture's own profile range. */
function numberingInputs(loaded: LoadedExport, records: Map<number, MergedIterationRecord>): { captureEnvRanges?: ProfileRange[]; logCompositions: LogComposition[]; gated: boolean } {
  const info = captureSettings(loaded);
  let captureEnvRanges: ProfileRange[] | undefined;
  if (info.profileStartStop) {
    try {
      captureEnvRanges = parseProfileRanges(info.profileStartStop, 'capture environment');
    } catch {
      captureEnvRanges = undefined;
    }
  }
  const logCompositions = [...records.values()].map((r) => ({
    iter: r.iter,
    contextRequests: r.contextRequests,
    generationRequests: r.generationRequests,
    contextTokens: r.contextTokens,
    generationTokens: r.generationTokens,
  }));
  return { captureEnvRanges, logCompositions, gated: info.profilerApiGated === true };
}

type LogComposition = Pick<MergedIterationRecord, 'iter' | 'contextRequests' | 'generationRequests' | 'contextTokens' | 'generationTokens'>;

function numberAllWindows(loaded: LoadedExport, fw: FoundWindows, records: Map<number, MergedIterationRecord>, logs: readonly ParsedIterationLog[], selection: IterationSelection): NumberedWindows {
  const source = fw.found.source;
  const inputs = numberingInputs(loaded, records);
  // TLLM_PROFILE_START_STOP means nothing to other engines: name only the options that apply.
  const hint = source.engine === 'vllm' ? '--first-iter N (the number of the first captured step)' : undefined;
  const out: NumberedWindows = { windows: [], rangeOf: [], numbering: [], own: [], ownNotes: [], captureOrderPids: new Set() };
  let activityEnd: number | null | undefined;
  for (const [pid, ranges] of [...fw.found.byPid].sort((a, b) => a[0] - b[0])) {
    let num: Numbering;
    if (source.numberSteps) {
      const sn = source.numberSteps(ranges, { loaded, logs, firstIter: selection.firstIter, profileRanges: selection.profileRanges, otherRanges: fw.found.otherRanges?.get(pid) ?? [] });
      sn.records.forEach((record, k) => out.own.push({ record, phase: sn.phases[k], cut: sn.cut[k], captureOrder: sn.source === 'capture-order' }));
      out.phaseRule ??= sn.phaseRule;
      out.ownNotes.push(...sn.notes.map((n) => `pid ${pid}: ${n}`));
      num = sn;
    } else {
      const numberingOpts = { firstIter: selection.firstIter, profileRanges: selection.profileRanges, captureEnvRanges: inputs.captureEnvRanges, semantics: source.profileRangeSemantics, logRecords: inputs.logCompositions, hint };
      num = selection.unnumberedInCaptureOrder ? numberWindowsOrCaptureOrder(ranges, numberingOpts, loaded.path) : numberWindows(ranges, numberingOpts, loaded.path);
      if (num.source === 'capture-order') out.captureOrderPids.add(pid);
    }
    out.numbering.push({ pid, source: num.source, detail: num.source === 'label' ? (fw.numberingDetail ?? num.detail) : num.detail });
    out.windows.push(...buildWindows(ranges, num.iters, (activityEnd ??= gpuActivityEnd(loaded.gpuOps(), loaded.apiCalls())), inputs.gated));
    out.rangeOf.push(...ranges);
  }
  return out;
}

/** The last window of each process ends when its GPU work drains. */
function closeLastWindows(windows: IterationWindow[], attr: GpuAttribution): void {
  for (let i = 0; i < windows.length; i++) {
    const isLast = i + 1 === windows.length || windows[i + 1].pid !== windows[i].pid;
    const w = windows[i];
    if (isLast) w.endNs = Math.max(w.rangeEndNs ?? w.startNs, Number.isFinite(attr.lastOpEndNs[i]) ? attr.lastOpEndNs[i] : w.startNs);
  }
}

/** KV tokens of a step's detail: both phases' sequence lengths; null when neither phase carries them. */
export function kvTokensOf(d: StepTokenDetail): number | null {
  if (!d.context && !d.generation) return null;
  return (d.context?.kvTokens ?? 0) + (d.generation?.kvTokens ?? 0);
}

/** The row fields a label's token detail adds: the detail, its KV tokens, attention ns per 1k of them. */
function tokenDetailFields(d: StepTokenDetail, categoryNs: Record<string, number>): Pick<IterationRow, 'tokenDetail' | 'kvTokens' | 'attentionNsPer1kKvTokens'> {
  const kv = kvTokensOf(d);
  const attention = categoryNs.attention;
  return { tokenDetail: d, kvTokens: kv, attentionNsPer1kKvTokens: kv && attention !== undefined ? (attention * 1000) / kv : null };
}

/** One row per window (cut steps included), with what the join found along the way. */
function iterationRows(nw: NumberedWindows, attr: GpuAttribution, records: Map<number, MergedIterationRecord>, ownNumbering: boolean): { rows: IterationRow[]; labelMismatches: number[]; windowsWithoutRecord: number[] } {
  const nc = attr.categories.length;
  const labelMismatches: number[] = [];
  const windowsWithoutRecord: number[] = [];
  const rows = nw.windows.map((w, i): IterationRow => {
    const own = nw.own[i];
    const busySet = attr.busyByPid.get(w.pid);
    const wall = w.endNs - w.startNs;
    const busy = busySet ? busyOverlap(busySet, w.startNs, w.endNs) : 0;
    const categoryNs: Record<string, number> = {};
    for (let c = 0; c < nc; c++) categoryNs[attr.categories[c]] = attr.categoryNs[i * nc + c];
    // A process numbered in capture order has no number of the engine's: no log record joins it.
    const rec = ownNumbering ? own.record : nw.captureOrderPids.has(w.pid) ? undefined : records.get(w.iter);
    const label = nw.rangeOf[i].label;
    let labelMatchesLog: boolean | null = null;
    if (rec && label && !own?.cut && (rec.contextRequests != null || rec.generationRequests != null)) {
      labelMatchesLog = labelAgreesWithLog(label, rec);
      if (!labelMatchesLog) labelMismatches.push(w.iter);
    }
    if (!rec && !own?.cut) windowsWithoutRecord.push(w.iter);
    const ctx = rec?.contextRequests ?? label?.contextRequests ?? null;
    const gen = rec?.generationRequests ?? label?.generationRequests ?? null;
    const told = phaseOf(ctx, gen) === 'unknown' ? own?.phase : null;
    return {
      iter: w.iter,
      pid: w.pid,
      startNs: w.startNs,
      endNs: w.endNs,
      wallNs: wall,
      gpuBusyNs: busy,
      gpuIdleNs: wall - busy,
      kernelNs: attr.kernelNs[i],
      kernelCount: attr.kernelCount[i],
      categoryNs,
      memcpyNs: attr.memcpyNs[i],
      memcpyCount: attr.memcpyCount[i],
      memsetNs: attr.memsetNs[i],
      memsetCount: attr.memsetCount[i],
      graphLaunches: attr.graphLaunches[i],
      otherThreadOps: attr.otherThreadOps[i],
      label: w.text,
      labelCounts: label,
      contextRequests: ctx,
      contextTokens: rec?.contextTokens ?? label?.contextTokens ?? null,
      generationRequests: gen,
      generationTokens: rec?.generationTokens ?? label?.generationTokens ?? null,
      phase: label?.speculative ? 'speculative' : told ? told.phase : phaseOf(ctx, gen),
      ...(told ? { phaseBasis: told.basis } : {}),
      ...(own?.captureOrder ? { captureOrder: true as const } : {}),
      log: rec ? joinedLog(rec) : null,
      matched: !!rec,
      labelMatchesLog,
      ...(label?.detail ? tokenDetailFields(label.detail, categoryNs) : {}),
    };
  });
  return { rows, labelMismatches, windowsWithoutRecord };
}

/**
 * Per executor iteration: its window, GPU busy/idle time, kernel time by category, memcpy/memset,
 * and its iteration-log record. See `findIterationRanges`, `numberWindows`, `attributeGpuWork`.
 * `found`: the windows `findWindows` found with the same logs and selection (else found here).
 */
export function analyzeIterations(loaded: LoadedExport, opts: IterationOptions = {}, found?: FoundWindows): IterationAnalysis {
  return analyzeIterationsWithWindows(loaded, opts, found).analysis;
}

/**
 * `analyzeIterations`, with each row's launch window (index for index with `analysis.iterations`):
 * what the layer attribution places kernels by, as the rows' GPU work was placed.
 */
export function analyzeIterationsWithWindows(loaded: LoadedExport, opts: IterationOptions = {}, found?: FoundWindows): { analysis: IterationAnalysis; windows: IterationWindow[] } {
  const classifier = opts.classifier ?? defaultCategoryClassifier();
  const selection = opts.selection ?? {};
  const logs = opts.logs ?? [];
  const fw = found ?? findWindows(loaded, logs, selection);
  // Read after the ranges are found, so an export without iterations fails fast; shared with the
  // attribution and the last window's end (and with the gap analysis).
  loaded.gpuOps();
  loaded.apiCalls();
  // Each log's records on the loops they describe, whichever side of the increment its server printed.
  const counters = alignLogCounters(fw.found, logs);
  const { records, notes: logNotes } = logRecordsToJoin(counters.logs);
  const source = fw.found.source;
  const nw = numberAllWindows(loaded, fw, records, logs, selection);
  const attr = attributeGpuWork(loaded, nw.windows, classifier);
  closeLastWindows(nw.windows, attr);
  const { rows: allRows, labelMismatches, windowsWithoutRecord } = iterationRows(nw, attr, records, !!source.numberSteps);

  // Steps the capture window cut leave the rows (their ops leave the placed counts).
  const cutIndex = nw.own.flatMap((o, i) => (o.cut ? [i] : []));
  const rows = allRows.filter((_, i) => !nw.own[i]?.cut);
  const cov = { ...attr.coverage };
  const cutStepOps = cutIndex.reduce((a, i) => a + attr.kernelCount[i] + attr.graphLaunches[i] + attr.memcpyCount[i] + attr.memsetCount[i], 0);
  const cutStepNs = cutIndex.reduce((a, i) => a + attr.kernelNs[i] + attr.memcpyNs[i] + attr.memsetNs[i], 0);
  cov.placedOps -= cutStepOps;
  cov.placedNs -= cutStepNs;

  // Joined by the window's own numbering (SGLang) or by iteration number: what no window took.
  const taken = new Set(source.numberSteps ? nw.own.flatMap((o) => (o.record ? [o.record.iter] : [])) : nw.windows.map((w) => w.iter));
  const recordsOutsideCapture = [...records.keys()].filter((k) => !taken.has(k)).sort((a, b) => a - b);
  const joined = rows.filter((r) => r.matched).length;
  // A marker range that never closed: the capture stopped inside that iteration (--duration, a
  // crash). Log-timestamp windows have no range of their own to close.
  const unclosedRanges = source.id === 'log-timestamps' ? [] : nw.windows.filter((w) => w.rangeEndNs == null).map((w) => w.iter);
  const notes = iterationNotes({ fw, counters, nw, rows, logs, logNotes, joined, windowsWithoutRecord, recordsOutsideCapture, labelMismatches, cov, cutStepOps, cutStepNs, unclosedRanges });

  const analysis: IterationAnalysis = {
    file: loaded.path,
    categories: attr.categories,
    iterations: rows,
    coverage: {
      ...cov,
      source: { id: source.id, engine: source.engine },
      windows: nw.windows.length,
      numbering: nw.numbering,
      joined,
      windowsWithoutRecord,
      recordsOutsideCapture,
      logRecords: records.size,
      logSkippedLines: opts.logs?.reduce((a, l) => a + l.skippedLines, 0) ?? 0,
      labelMismatches,
      unclosedRanges,
      ignoredOtherThreadRanges: fw.found.ignoredOtherThreads,
      ...(nw.phaseRule ? { phaseRule: nw.phaseRule } : {}),
      ...(cutIndex.length ? { cutSteps: cutIndex.map((i) => nw.windows[i].iter), cutStepOps, cutStepNs } : {}),
      notes,
    },
  };
  return { analysis, windows: nw.windows.filter((_, i) => !nw.own[i]?.cut) };
}

/** The iteration analysis's notes for people, in order. */
/** One note for the step markers of a known family whose text was not (fully) understood. */
export function unparsedLabelsNote(engine: Engine, u: UnparsedLabels): string {
  const parts = [u.unparsed ? `${u.unparsed} without a batch that could be read` : '', u.partial ? `${u.partial} read in part (the rest left empty)` : ''].filter(Boolean);
  return `${engine} step markers in a form not understood: ${parts.join(', ')}; e.g. '${clipRangeText(u.example, 160)}'`;
}

function iterationNotes(x: {
  fw: FoundWindows;
  counters: { notes: string[] };
  nw: NumberedWindows;
  rows: IterationRow[];
  logs: readonly ParsedIterationLog[];
  logNotes: string[];
  joined: number;
  windowsWithoutRecord: number[];
  recordsOutsideCapture: number[];
  labelMismatches: number[];
  cov: AttributionCoverage;
  cutStepOps: number;
  cutStepNs: number;
  unclosedRanges: number[];
}): string[] {
  const { rows, cov, logs } = x;
  const source = x.fw.found.source;
  const notes: string[] = [...x.fw.sourceNotes, ...x.counters.notes];
  for (const nb of x.nw.numbering) notes.push(`pid ${nb.pid}: ${nb.detail}`);
  notes.push(...x.nw.ownNotes);
  notes.push(`${rows.length} iterations found (${compactRanges(rows.map((r) => r.iter).sort((a, b) => a - b))})`);
  if (logs.length) {
    notes.push(...x.logNotes, `${x.joined} of ${rows.length} iterations joined to a log record`);
    if (x.windowsWithoutRecord.length) notes.push(`iterations without a log record: ${compactRanges(x.windowsWithoutRecord)}`);
    if (x.recordsOutsideCapture.length) {
      notes.push(`log records outside the capture: ${compactRanges(x.recordsOutsideCapture)}${x.joined === 0 && !source.numberSteps ? ' (no overlap with the capture: is the log from another run?)' : ''}`);
    }
    if (x.labelMismatches.length) notes.push(`NVTX label counts differ from the log in iterations ${compactRanges(x.labelMismatches)}`);
    const skipped = logs.reduce((a, l) => a + l.skippedLines, 0);
    if (skipped) notes.push(`${skipped} log lines were not iteration records (skipped)`);
  }
  if (cov.gpuOps) {
    notes.push(`${cov.placedOps} of ${cov.gpuOps} GPU ops (${((cov.placedNs / (cov.gpuOpNs || 1)) * 100).toFixed(1)}% of GPU op time) placed in iterations`);
    if (cov.outsideOps) notes.push(`${cov.outsideOps} GPU ops launched outside any iteration window`);
    if (cov.noRuntimeOps) notes.push(`${cov.noRuntimeOps} GPU ops have no CUDA API row in the export (time-trimmed?) and could not be placed`);
    if (cov.otherProcessOps) notes.push(`${cov.otherProcessOps} GPU ops belong to processes without iteration ranges`);
    if (x.cutStepOps) notes.push(`${x.cutStepOps} GPU ops (${(x.cutStepNs / 1e6).toFixed(3)} ms) launched in the cut steps are in no iteration row`);
  }
  const dpRanks = dpRanksOf([...logs]);
  if (dpRanks.length > 1) notes.push(`the vLLM log lines come from DP ranks ${dpRanks.join(', ')}: Iteration(N) counts each engine core's steps, so records of one N were merged across ranks; pass one rank's lines per export`);
  if (x.unclosedRanges.length) notes.push(`iteration range never closed in ${compactRanges([...x.unclosedRanges].sort((a, b) => a - b))}: the capture ended inside it`);
  const unparsed = x.fw.found.unparsedLabels;
  if (unparsed) notes.push(unparsedLabelsNote(source.engine, unparsed));
  if (x.fw.found.ignoredOtherThreads) notes.push(`${x.fw.found.ignoredOtherThreads} matching ranges on non-executor threads were ignored`);
  return notes;
}
