/**
 * Numbers an SGLang capture's forward steps and joins them to the log's batch lines
 * (`IterationSource.numberSteps` of the SGLang source): which steps the capture window cut, what
 * each step ran, the alignment with each scheduler's lines (sglangAlignment.ts), and the phase of
 * the steps no line describes. Never a number that is not SGLang's: without a unique alignment the
 * steps are numbered 0, 1, ... in capture order, and the notes and `numbering.source` say so.
 */
import type { IterationLogRecord, MergedIterationRecord, ParsedIterationLog } from '../logs/logRecords.js';
import { sglangLineOf } from '../logs/sglangBatchLines.js';
import type { Phase } from './phase.js';
import { numberWindows } from './numbering.js';
import { alignSglangSteps, type SglangAlignment, type SglangLine, type SglangStep } from './sglangAlignment.js';
import { cutReasons, kindFromLaunches, launchesPerStep, launchesWithoutWork, stepSpanKind, type LaunchRule, type SglangStepKind, type StepLaunches } from './sglangSteps.js';
import type { IterationSource, PhaseRule, StepNumbering, StepNumberingContext } from './source.js';
import { collectRanges } from './windows.js';
import type { FoundIterationRanges, IterationRange } from './source.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { callEnd } from '../load/apiCallColumns.js';

/** One scheduler's lines in one log file, in file order. */
interface LineGroup {
  file: string;
  scheduler: string;
  lines: SglangLine[];
}

function lineGroups(logs: readonly ParsedIterationLog[]): LineGroup[] {
  const groups = new Map<string, LineGroup>();
  for (const log of logs) {
    for (const record of log.records) {
      const line = sglangLineOf(record);
      if (!line) continue;
      const key = `${log.file}\u0000${line.scheduler}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { file: log.file, scheduler: line.scheduler, lines: [] }));
      g.lines.push({ record, line });
    }
  }
  return [...groups.values()];
}

/** Which launch rules the log leaves standing (see `LaunchRule`). */
function launchRuleOf(groups: readonly LineGroup[]): LaunchRule {
  const rule: LaunchRule = { graphMeansDecode: true, eagerMeansPrefill: true };
  for (const g of groups) {
    for (const { line } of g.lines) {
      if (line.batch === 'prefill' && line.cudaGraph === true) rule.graphMeansDecode = false;
      if (line.batch === 'decode' && line.cudaGraph === false) rule.eagerMeansPrefill = false;
    }
  }
  return rule;
}

/** Only for collecting the scheduler's other ranges (the events around each step). */
const SCHEDULER_RANGES: IterationSource = {
  id: 'sglang',
  engine: 'sglang',
  profileRangeSemantics: 'closed',
  findRanges: () => ({ source: SCHEDULER_RANGES, byPid: new Map(), ignoredOtherThreads: 0 }),
  parseLabel: () => null,
};

/**
 * The steps with, per process, the scheduler's other ranges (`scheduler.*` but the steps' own
 * text; the events around each step, which tell the steps the capture window cut).
 */
export function withSchedulerRanges(loaded: LoadedExport, steps: FoundIterationRanges): FoundIterationRanges {
  const otherRanges = new Map<number, IterationRange[]>();
  for (const [pid, ranges] of steps.byPid) {
    otherRanges.set(pid, collectRanges(loaded, SCHEDULER_RANGES, (t) => t.startsWith('scheduler.') && t !== ranges[0].text).byPid.get(pid) ?? []);
  }
  return { ...steps, otherRanges };
}

/** First start and last end of what the capture recorded on the steps' thread besides the steps: CUDA calls and the other scheduler ranges. */
function threadEventSpan(ranges: readonly IterationRange[], ctx: StepNumberingContext): { firstNs: number; lastNs: number } {
  const { pid, tid } = ranges[0];
  let firstNs = Infinity;
  let lastNs = -Infinity;
  const api = ctx.loaded.apiCalls();
  for (let i = 0; i < api.count; i++) {
    if (api.pid[i] !== pid || api.tid[i] !== tid) continue;
    firstNs = Math.min(firstNs, api.start[i]);
    lastNs = Math.max(lastNs, callEnd(api, i));
  }
  for (const r of ctx.otherRanges) {
    if (r.tid !== tid) continue;
    firstNs = Math.min(firstNs, r.startNs);
    lastNs = Math.max(lastNs, r.rangeEndNs ?? r.startNs);
  }
  return { firstNs, lastNs };
}

const PHASE_OF_KIND: Record<SglangStepKind, Phase> = { prefill: 'context', decode: 'generation', mixed: 'mixed', idle: 'empty', speculative: 'speculative' };

/** The steps as the alignment sees them: kind from the step span, else from the launches (none for a cut step). */
function stepsOf(ranges: readonly IterationRange[], launches: readonly StepLaunches[], rule: LaunchRule, cut: readonly (string | null)[]): { steps: SglangStep[]; fromLaunches: boolean[] } {
  const fromLaunches: boolean[] = [];
  const steps = ranges.map((r, k) => {
    const span = stepSpanKind(r.detail ?? r.text);
    const kind = span ?? (cut[k] ? null : kindFromLaunches(launches[k], rule));
    fromLaunches.push(span === null && kind !== null);
    const l = launches[k];
    return { kind, label: r.label, launchShape: kind === null && !cut[k] && l.graphLaunches + l.kernelLaunches > 0 ? `${l.graphLaunches}/${l.kernelLaunches}` : null };
  });
  return { steps, fromLaunches };
}

/** The unique alignment over all schedulers' lines, or why there is none. */
function chooseAlignment(steps: readonly SglangStep[], groups: readonly LineGroup[]): { chosen: { group: LineGroup; fit: SglangAlignment } | null; why: string } {
  if (groups.length === 0) return { chosen: null, why: 'no SGLang batch line in the logs' };
  const results = groups.map((group) => ({ group, result: alignSglangSteps(steps, group.lines) }));
  const unique = results.filter((r) => r.result.fits.length === 1);
  const ambiguous = results.filter((r) => r.result.fits.length > 1);
  if (unique.length === 1 && ambiguous.length === 0) return { chosen: { group: unique[0].group, fit: unique[0].result.fits[0] }, why: '' };
  if (ambiguous.length || unique.length > 1) return { chosen: null, why: `the log fits the ${steps.length} steps at more than one place (${ambiguous.length ? ambiguous[0].result.mode : 'several schedulers'}), so it cannot say which steps these are` };
  return { chosen: null, why: `the log's batch lines fit the ${steps.length} steps nowhere (is it from another run?)` };
}

const MODE_TEXT: Record<SglangAlignment['mode'], string> = { 'forward-numbers': 'their forward-iteration numbers [N]', 'every-step': 'a line per step', 'prefill-sequence': 'the prefill sequence' };

/** `joined to sglang.log (DP0) by the prefill sequence (14 of 80 steps have a line)`. */
function joinDetail(fit: SglangAlignment, group: LineGroup, n: number): string {
  const joined = fit.lineOf.filter((i) => i >= 0).length;
  return `joined to ${group.file}${group.scheduler ? ` (${group.scheduler})` : ''} by ${MODE_TEXT[fit.mode]} (${joined} of ${n} steps have a line; the only fit)`;
}

/** How the alignment numbered the steps (or why it could not). */
function alignmentDetail(fit: SglangAlignment, group: LineGroup, n: number): string {
  if (fit.mode === 'forward-numbers') return `${joinDetail(fit, group, n)}; numbered by them (confidence: high)`;
  if (fit.mode === 'every-step') {
    const numbers = "numbers are the lines' positions (the log shows a line for every step, --decode-log-interval 1, and is taken to start at the server's first step)";
    if (fit.chosenByLaunchShapeOf !== undefined) {
      return `${joinDetail(fit, group, n).replace('; the only fit', '')}: offset ${fit.lineOf[0]}, the only one of ${fit.chosenByLaunchShapeOf} fits where steps that launched alike are batches of one kind (the steps name no kind: eager, no cuda graph); ${numbers} (confidence: medium)`;
    }
    return `${joinDetail(fit, group, n)}: unique offset ${fit.lineOf[0]}; ${numbers} (confidence: high)`;
  }
  return `${joinDetail(fit, group, n)}; the log has no step numbers for them, so they are numbered 0..${n - 1} in capture order (not SGLang's forward iterations)`;
}

/** A line's record as the step's join: a MIXED step's running requests come from its span, which the prefill line cannot tell. */
function joinedRecord(record: IterationLogRecord, step: SglangStep): MergedIterationRecord {
  if (step.kind !== 'mixed') return { ...record, sources: [record] };
  const mixed = { ...record, generationRequests: step.label?.generationRequests ?? null };
  return { ...mixed, sources: [mixed] };
}

/** The launch rule's note and field, when it gave some step its phase. */
function phaseRuleOf(rule: LaunchRule, used: number, checked: number, aligned: boolean): PhaseRule {
  const parts = [rule.graphMeansDecode ? 'a CUDA-graph launch = decode' : '', rule.eagerMeansPrefill ? 'eager kernel launches only = prefill (EXTEND: context-only unless --enable-mixed-chunk)' : ''].filter(Boolean);
  const high = aligned && checked > 0;
  return {
    rule: `phase from what run_batch launched: ${parts.join('; ')}`,
    confidence: high ? 'high' : 'medium',
    why: high
      ? `the rule holds on all ${checked} steps that have a log line (the alignment is unique)`
      : "no log line to check it against: SGLang's defaults (decode batches up to --cuda-graph-max-bs replay CUDA graphs, prefill runs eager)",
    steps: used,
  };
}

/** See the module comment. */
export function numberSglangSteps(ranges: IterationRange[], ctx: StepNumberingContext): StepNumbering {
  const n = ranges.length;
  const nameOf = (id: number) => ctx.loaded.stringOf(id);
  const apiCalls = ctx.loaded.apiCalls();
  const cut = cutReasons(ranges, threadEventSpan(ranges, ctx), (k) => launchesWithoutWork(ranges[k], apiCalls, ctx.loaded.gpuOps(), nameOf));
  const groups = lineGroups(ctx.logs);
  const rule = launchRuleOf(groups);
  const { steps, fromLaunches } = stepsOf(ranges, launchesPerStep(ranges, apiCalls, nameOf), rule, cut);
  const { chosen, why } = chooseAlignment(steps, groups);
  const notes: string[] = [];

  const records = steps.map((s, k) => {
    const i = chosen ? chosen.fit.lineOf[k] : -1;
    return i >= 0 ? joinedRecord(chosen!.group.lines[i].record, s) : null;
  });
  let numbering: { iters: number[]; source: StepNumbering['source']; detail: string };
  if (ctx.firstIter !== undefined || ctx.profileRanges?.length) {
    numbering = numberWindows(ranges, { firstIter: ctx.firstIter, profileRanges: ctx.profileRanges, semantics: 'closed' }, ctx.loaded.path);
  } else if (chosen?.fit.numbers) {
    numbering = { iters: chosen.fit.numbers, source: 'log-alignment', detail: alignmentDetail(chosen.fit, chosen.group, n) };
  } else {
    const detail = chosen ? alignmentDetail(chosen.fit, chosen.group, n) : `no SGLang step number: ${why}; numbered 0..${n - 1} in capture order (not SGLang's forward iterations; --first-iter N gives them numbers)`;
    numbering = { iters: steps.map((_, k) => k), source: 'capture-order', detail };
  }
  if (chosen && numbering.source !== 'capture-order' && numbering.source !== 'log-alignment') notes.push(joinDetail(chosen.fit, chosen.group, n));

  // The phase each step's kind says (analyzeIterations uses it where the counts do not say one):
  // the kind its span names, else what it launched.
  const phases = steps.map((s, k) => (s.kind === null || cut[k] ? null : { phase: PHASE_OF_KIND[s.kind], basis: fromLaunches[k] ? ('launches' as const) : ('step-span' as const) }));
  const counted = (k: number) => (records[k] ? records[k]!.contextRequests !== null && records[k]!.generationRequests !== null : steps[k].label !== null);
  const fromRule = phases.filter((p, k) => p?.basis === 'launches' && !counted(k)).length;
  const checked = steps.filter((_, k) => fromLaunches[k] && records[k] && !cut[k]).length;
  const phaseRule = fromRule > 0 ? phaseRuleOf(rule, fromRule, checked, chosen !== null) : undefined;
  if (phaseRule) notes.push(`${phaseRule.steps} steps without a log line: ${phaseRule.rule} (confidence: ${phaseRule.confidence}: ${phaseRule.why})`);
  const unknown = steps.filter((s, k) => !counted(k) && s.kind === null && !cut[k]).length;
  if (unknown) notes.push(`${unknown} steps have no log line and no phase: their launches do not tell (the log's cuda graph fields void the rule, or they launched nothing)`);
  const cutSteps = cut.flatMap((c, k) => (c ? [`${numbering.iters[k]} (${c})`] : []));
  if (cutSteps.length) notes.push(`${cutSteps.length} step${cutSteps.length > 1 ? 's' : ''} cut by the capture window, left out of the per-iteration rows: ${cutSteps.join('; ')}`);
  return { ...numbering, records, phases, cut, notes, ...(phaseRule ? { phaseRule } : {}) };
}
