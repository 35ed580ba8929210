import { MAX_TIMELINE_STEPS, type StepTimeline, type TimelineLayers, type TimelineStep } from '../../src/overview/stepTimeline.js';
import { formatNs } from '../units.js';
import { escapeHtml } from './htmlTable.js';
import { causeColors, seriesColors } from './overviewChart.js';

/** Host range kinds, in the order the payload numbers them (the page script names them back). */
export const HOST_KINDS = ['nvtx', 'gc', 'gil_wait', 'gil_hold', 'sync'] as const;

/**
 * JSON for a `<script type="application/json">` element: `<` written as `\u003c`, so no text of
 * the export (a kernel or range name) can close the element or open a comment; U+2028/9 escaped too.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** How the step's layers were found, as the `layers` section says it (the period's fit for an inferred split). */
export function layerSourceText(l: TimelineLayers): string {
  if (l.source === 'layerwise-nvtx') return 'split by the layerwise NVTX markers its launches ran in';
  if (l.source === 'torch-modules') return 'split by the PyTorch-profiler module events (nn.Module) its launches ran in';
  if (!l.fit) return 'no layer marker and no repeating kernel sequence: all its kernels are outside layers';
  const f = l.fit;
  return `inferred by period (no layer marker): ${f.period} kernels a layer, ${f.layers} layers${f.runs > 1 ? ` x ${f.runs} runs` : ''}, fit ${(f.fitShare * 100).toFixed(1)}% of its kernels`;
}

/** The short source the lane's label shows (the note above the canvas says it in full). */
const LANE_SOURCE: Record<TimelineLayers['source'], string> = { 'layerwise-nvtx': 'markers', 'torch-modules': 'modules', period: 'period' };

/**
 * A step's layer lane: spans as rows [device, start, end, layer (-1 outside layers), pass, kernel ns,
 * kernels, ns by module kind], times relative to the view's start like the ops.
 */
function layersPayload(l: TimelineLayers, rel: (t: number) => number) {
  return {
    source: LANE_SOURCE[l.source] + (l.fit ? ` ${(l.fit.fitShare * 100).toFixed(0)}%` : ''),
    note: `${l.layerCount} layers, ${l.passes} passes; ${layerSourceText(l)}.`,
    spans: l.spans.map((x) => [x.deviceId, rel(x.startNs), rel(x.endNs), x.layer ?? -1, x.pass, x.kernelNs, x.kernelCount, x.kindNs]),
  };
}

/** A step's payload: times in ns relative to the view's start (small integers), ops and ranges as flat rows. */
function stepPayload(s: TimelineStep) {
  const t0 = s.viewStartNs;
  const rel = (t: number) => Math.round(t - t0);
  const o = s.ops;
  const ops: number[] = [];
  for (let i = 0; i < o.startNs.length; i++) ops.push(rel(o.startNs[i]), rel(o.endNs[i]), o.deviceId[i], o.streamId[i], o.category[i], o.name[i], rel(o.launchStartNs[i]), o.launchTid[i]);
  return {
    iter: s.iter,
    pid: s.pid,
    reasons: s.reasons,
    label: s.label,
    t0,
    span: rel(s.viewEndNs),
    window: [rel(s.startNs), rel(s.endNs)],
    executorTid: s.executorTid,
    ops,
    gaps: s.gaps.map((g) => [g.deviceId, rel(g.startNs), rel(g.endNs), g.cause]),
    host: s.host.map((h) => [h.tid, HOST_KINDS.indexOf(h.kind), h.name, rel(h.startNs), rel(h.endNs)]),
    droppedOps: s.droppedOps,
    droppedHostRanges: s.droppedHostRanges,
    ...(s.layers ? { layers: layersPayload(s.layers, rel) } : {}),
  };
}

/** Whether the timeline draws layer lanes (`report --format html --layers`): the page script then draws them. */
export function timelineHasLayers(t: StepTimeline): boolean {
  return t.steps.some((s) => s.layers);
}

/** The page script's data: steps, names, and the colours the overview uses for the same categories and causes. */
export function timelinePayload(t: StepTimeline, gpuSeries: readonly string[]) {
  const causes = [...new Set(t.steps.flatMap((s) => s.gaps.map((g) => g.cause)))];
  const series = seriesColors(gpuSeries);
  const extra = t.categories.filter((c) => !series[c]);
  const more = seriesColors([...gpuSeries, ...extra]);
  return {
    categories: t.categories,
    categoryColors: t.categories.map((c) => series[c] ?? more[c]),
    causeColors: causeColors(causes),
    hostKinds: HOST_KINDS,
    names: t.names,
    steps: t.steps.map(stepPayload),
  };
}

const reasonText = (r: string) => (r.startsWith('finding:') ? `cited by ${r.slice(8)}` : r);

/** One button per step: its iteration, wall time and why it is shown. */
function stepButton(s: TimelineStep, i: number): string {
  const why = s.reasons.map(reasonText).join(', ');
  return `<button type="button" class="step" data-step="${i}" data-iter="${s.iter}" aria-pressed="${i === 0}">iteration ${s.iter} · ${escapeHtml(formatNs(s.endNs - s.startNs))} · ${escapeHtml(why)}</button>`;
}

/**
 * The timeline block: step buttons, the canvas the page script draws into, and the data. Its root
 * carries `data-timeline` (tests and users find it by it) and the visible span as
 * `data-view-start`/`data-view-end` (ns from the step's start), which the script keeps current.
 */
export function timelineHtml(t: StepTimeline, gpuSeries: readonly string[]): string {
  const dropped = t.steps.reduce((a, s) => a + s.droppedOps, 0);
  const bound = `The slowest and the median iteration, then those the findings cite (${t.citedIterations} cited), at most ${MAX_TIMELINE_STEPS}: ${t.steps.length} shown.`;
  const note = dropped ? ` ${dropped} GPU ops beyond the per-step limit are left out.` : '';
  return `<div class="timeline" data-timeline tabindex="0" aria-label="Step timeline: W/S zoom, A/D pan, Ctrl+wheel zoom, Shift+wheel pan, drag to pan">
<div class="timeline-steps">${t.steps.map(stepButton).join('\n')}</div>
<p class="note">${escapeHtml(bound + note)} Keys: <kbd>W</kbd>/<kbd>S</kbd> zoom, <kbd>A</kbd>/<kbd>D</kbd> pan, <kbd>Ctrl</kbd>+wheel zoom, <kbd>Shift</kbd>+wheel pan, drag to pan, <kbd>0</kbd> whole step. <span class="timeline-span" data-role="span"></span>${timelineHasLayers(t) ? ' <span class="timeline-layers" data-role="layers"></span>' : ''}</p>
<div class="timeline-canvas-wrap"><canvas class="timeline-canvas"></canvas><div class="timeline-tip" data-role="tip" hidden></div></div>
<div class="legend" data-role="legend"></div>
<script type="application/json" id="timeline-data">${scriptJson(timelinePayload(t, gpuSeries))}</script>
</div>`;
}
