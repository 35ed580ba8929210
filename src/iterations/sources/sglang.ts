import type { LoadedExport } from '../../load/loadedExport.js';
import { numberSglangSteps, withSchedulerRanges } from '../sglangNumbering.js';
import { isSglangStepSpan, lastStartingBy, parseSglangStepSpan, SGLANG_RUN_BATCH, stepSpanKind } from '../sglangSteps.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';
import type { FoundIterationRanges } from '../source.js';

const isSglangMarker = (t: string) => t === SGLANG_RUN_BATCH || isSglangStepSpan(t);
/** A step span of the target model (speculative decoding adds DRAFT_* forwards inside the same step). */
const isTargetStepSpan = (t: string) => isSglangStepSpan(t) && stepSpanKind(t) !== null;

/** Gives each `scheduler.run_batch` range the first target step span inside it (same thread): its text as `detail`, its counts as `label`. */
function attachStepSpans(runs: FoundIterationRanges, spans: FoundIterationRanges): void {
  for (const [pid, list] of runs.byPid) {
    for (const s of spans.byPid.get(pid) ?? []) {
      const k = lastStartingBy(list, s.startNs);
      const r = list[k];
      if (k < 0 || r.tid !== s.tid || (r.rangeEndNs !== null && s.startNs > r.rangeEndNs) || r.detail !== undefined) continue;
      r.detail = s.text;
      r.label = parseSglangStepSpan(s.text);
    }
  }
}

/**
 * SGLang's forward steps: one `scheduler.run_batch` range each (default domain, registered strings,
 * SGLANG_ENABLE_NVTX_SCHEDULER=1 under nsys; a torch `record_function` span in PyTorch-profiler
 * traces), labelled by the `step[...]` span inside it when the trace has one. Traces with step
 * spans and no scheduler spans (2026-04-22 .. 2026-06-14) use the step spans. No range carries a
 * number: `numberSteps` aligns the steps with the log's batch lines (sglangNumbering.ts).
 */
export const sglangSource: IterationSource = {
  id: 'sglang',
  engine: 'sglang',
  // `--profile-range A-B` names the steps captured, both ends included (SGLang's start_step .. start_step + num_steps - 1).
  profileRangeSemantics: 'closed',
  findRanges(loaded: LoadedExport) {
    const runs = collectRanges(loaded, this, (t) => t === SGLANG_RUN_BATCH);
    const spans = collectRanges(loaded, this, isTargetStepSpan);
    if (runs.byPid.size === 0) return withSchedulerRanges(loaded, spans);
    attachStepSpans(runs, spans);
    return withSchedulerRanges(loaded, runs);
  },
  matchesText: isSglangMarker,
  parseLabel: parseSglangStepSpan,
  numberSteps: numberSglangSteps,
};
