import { noCudaDiagnostic, processLabel, type CaptureHealth, type NsysDiagnostic, type ProfiledProcess } from '../../analysis/captureHealth.js';
import { traceNames } from '../../load/captureSettings.js';
import { compactRanges } from '../../formatRanges.js';
import type { IterationRow } from '../../iterations/types.js';
import { healthRemedy, KINETO_WITHOUT_GPU_WORK, remedyEngine, type HealthRemedyId } from '../remedies.js';
import type { Evidence, Finding, HealthRuleContext } from '../finding.js';
import { formatNs, makeFinding, pct } from './common.js';

// Whether the capture can answer at all: the findings that come before any other. Each reads the
// health part of the analysis (never the export) and names what the capture holds and why.

/** At most this many characters of an error line in a title (the evidence has it whole). */
const TITLE_TEXT = 160;
const clip = (s: string, n = TITLE_TEXT) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const quote = (d: NsysDiagnostic) => `nsys ${d.severity}: "${d.text}"${d.count > 1 ? ` (${d.count} times)` : ''}`;

function healthFinding(ctx: HealthRuleContext, id: HealthRemedyId, f: Pick<Finding, 'title' | 'evidence' | 'estimate' | 'section'> & { health: 'blocking' | 'caveat'; severity?: Finding['severity']; traced?: string[]; remedyPrefix?: string; remedy?: string }): Finding {
  const health = ctx.input.health;
  const remedy = f.remedy ?? healthRemedy(id, remedyEngine(ctx.engine, health.command));
  return makeFinding(ctx, {
    id,
    title: f.title,
    severity: f.severity ?? 'high',
    recoverableNs: 0,
    restsOnNs: 0,
    estimate: f.estimate,
    evidence: f.evidence,
    remedy: f.remedyPrefix ? `${f.remedyPrefix} ${remedy}` : remedy,
    section: f.section,
    confidence: { level: 'measured', traced: f.traced ?? traceNames(health.tracing), notTraced: [] },
    health: f.health,
  });
}

/** `83 CPU samples, 140 scheduling events on 5 threads; no CUDA call; no NVTX event`. */
function activityText(p: ProfiledProcess): string {
  const did: string[] = [];
  if (p.cpuSamples) did.push(`${p.cpuSamples} CPU samples`);
  if (p.schedEvents) did.push(`${p.schedEvents} scheduling events`);
  if (p.osrtCalls) did.push(`${p.osrtCalls} OS-runtime calls`);
  const threads = p.threads ? ` on ${p.threads} thread${p.threads === 1 ? '' : 's'}` : '';
  const cuda = p.cudaCalls ? `${p.cudaCalls} CUDA API calls but no GPU work` : 'no CUDA call';
  return `${did.length ? did.join(', ') + threads : 'no sampled activity'}; ${cuda}; ${p.nvtxEvents ? `${p.nvtxEvents} NVTX events` : 'no NVTX event'}`;
}

/** What the export recorded, kind by kind, with "(not traced)" where nsys was not asked for it. */
function recordedText(h: CaptureHealth): string {
  const r = h.recorded;
  const t = h.tracing;
  const parts = ['no kernel, memcpy, memset or CUDA-graph row'];
  parts.push(r.cudaCalls ? 'CUDA API calls' : `no CUDA API call${t.cuda === false ? ' (CUDA not traced)' : ''}`);
  parts.push(r.nvtx ? 'NVTX events' : `no NVTX event${t.nvtx === false ? ' (NVTX not traced)' : ''}`);
  parts.push(r.osrt ? 'OS-runtime calls' : `no OS-runtime call${t.osrt === false ? ' (OS runtime not traced)' : ''}`);
  if (r.cpuSamples || r.schedEvents) parts.push('CPU samples and scheduling only');
  return `recorded: ${parts.join('; ')}`;
}

/** A benchmark client rather than a server: its command, or HTTP errors in its output, say so. */
const CLIENT_COMMAND = /client|bench|benchmark|genai-perf|locust|loadgen|\bcurl\b|\bwrk\b|\bab\b|\brequests?\b/i;
const HTTP_OUTPUT = /\bHTTP|Connection refused|ConnectionError|urllib3|requests\.exceptions|aiohttp|httpx/;

function clientHint(h: CaptureHealth): Evidence | null {
  const stderr = h.output.filter((o) => o.stream === 'stderr').flatMap((o) => o.tail).join('\n');
  const byCommand = h.command !== null && CLIENT_COMMAND.test(h.command);
  const byOutput = HTTP_OUTPUT.test(stderr);
  if (!byCommand && !byOutput) return null;
  const why = [byCommand ? `its command \`${h.command}\`` : null, byOutput ? 'HTTP connection errors in its stderr' : null].filter(Boolean).join(' and ');
  return { text: `the profiled program looks like a client of an inference server (${why}): the GPU work runs in the server process, which this capture did not include` };
}

function outputEvidence(h: CaptureHealth, lines: number): Evidence[] {
  const out: Evidence[] = [];
  for (const o of h.output) {
    if (o.stream === 'other') continue;
    if (o.lines === 0) out.push({ text: `${o.stream} of pid ${o.pid}: empty` });
    else for (const l of o.tail.slice(-(o.stream === 'stderr' ? lines : 1))) out.push({ text: `${o.stream} of pid ${o.pid}${o.stream === 'stdout' ? ' (last line)' : ''}: ${l}` });
  }
  return out;
}

/** No kernel, memcpy, memset or graph row at all: nothing below this finding has numbers to show. */
export function noGpuWork(ctx: HealthRuleContext): Finding[] {
  const h = ctx.input.health;
  if (!h.noGpuWork) return [];
  const evidence: Evidence[] = [];
  if (h.command) evidence.push({ text: `profiled command: \`${h.command}\`` });
  for (const p of h.processes.slice(0, ctx.t.evidenceRows)) evidence.push({ text: `${processLabel(p)}: ${activityText(p)}` });
  evidence.push({ text: recordedText(h) });
  if (h.tracing.events.length) evidence.push({ text: `traced: -t ${traceNames(h.tracing).join(',')}${h.tracing.gpuMemoryUsage ? ' --cuda-memory-usage=true' : ''}${h.tracing.cuda && !h.recorded.cudaCalls ? ' (CUDA was traced: the program made no CUDA call)' : ''}` });
  const cuda = noCudaDiagnostic(h.diagnostics);
  for (const d of h.diagnostics.filter((x) => x === cuda || /^No (NVTX|OS runtime)/i.test(x.text) || /profiling might have not been started/i.test(x.text)).slice(0, ctx.t.evidenceRows)) evidence.push({ text: quote(d) });
  evidence.push(...outputEvidence(h, 3));
  const client = clientHint(h);
  if (client) evidence.push(client);
  return [
    healthFinding(ctx, 'no-gpu-work', {
      title: `No GPU work was recorded: ${clip(h.noGpuWork)}`,
      evidence,
      estimate: 'not applicable: the capture holds no GPU work to measure',
      section: 'run',
      health: 'blocking',
      remedy: h.kineto ? KINETO_WITHOUT_GPU_WORK : undefined,
    }),
  ];
}

/** The profiled program died: its stderr ends in a traceback or a fatal error. */
export function programCrashed(ctx: HealthRuleContext): Finding[] {
  const h = ctx.input.health;
  const c = h.crash;
  if (!c) return [];
  const refused = c.tail.some((l) => /Connection refused|ConnectionRefusedError|Failed to establish a new connection/.test(l));
  return [
    healthFinding(ctx, 'program-crashed', {
      title: `The profiled program crashed: ${clip(c.errorLine)}`,
      evidence: [{ text: `pid ${c.pid} exited with: ${c.errorLine}` }, ...c.tail.map((l) => ({ text: `stderr of pid ${c.pid}: ${l}` }))],
      estimate: 'not applicable: the run ended in an error',
      section: 'run',
      // Without GPU work the crash is why nothing was recorded; with some, the numbers cover the run up to the crash.
      health: h.noGpuWork ? 'blocking' : 'caveat',
      remedyPrefix: refused ? 'The client could not connect: the server it sends requests to was not running (or not at that address).' : undefined,
    }),
  ];
}

/** nsys says it dropped or lost events: idle gaps and per-iteration numbers may be holes in the trace. */
export function eventsLost(ctx: HealthRuleContext): Finding[] {
  const h = ctx.input.health;
  if (h.eventLoss.length === 0) return [];
  return [
    healthFinding(ctx, 'events-lost', {
      title: `nsys lost events during the capture: ${clip(h.eventLoss[0].text)}`,
      evidence: [...h.eventLoss, ...h.incompleteCollection].map((d) => ({ text: quote(d), ...(d.firstNs >= 0 ? { startNs: d.firstNs } : {}) })),
      estimate: 'not applicable: what was lost cannot be measured; GPU idle time may be events that were dropped',
      section: 'coverage',
      health: 'blocking',
    }),
  ];
}

/** GPU work recorded, but only start-up's: model load copies, or nothing after CUDA-graph capture. */
export function servingLoopMissing(ctx: HealthRuleContext): Finding[] {
  const { health: h, iterations } = ctx.input;
  const l = h.launches;
  if (h.noGpuWork || iterations || !l || l.gpuOps === 0) return [];
  const evidence: Evidence[] = [];
  let what: string;
  if (l.kernels === 0 && l.graphRows === 0) {
    what = `${l.gpuOps} copies and memsets (${formatNs(l.gpuOpNs)}), no kernel: model loading`;
    evidence.push({ text: `GPU work: ${l.gpuOps} memcpy/memset ops, ${formatNs(l.gpuOpNs)}; no kernel and no CUDA-graph launch ran` });
  } else if (l.captureCalls > 0 && l.captureEndNs !== null && l.opNsAfterCapture <= 0.05 * l.gpuOpNs) {
    what = `the GPU work stops at CUDA-graph capture (${formatNs(l.captureStartNs ?? 0)}..${formatNs(l.captureEndNs)})`;
    evidence.push({ text: `${l.captureCalls} graph-capture calls (cudaStreamBeginCapture / EndCapture / cudaGraphInstantiate) from ${formatNs(l.captureStartNs ?? 0)} to ${formatNs(l.captureEndNs)}`, startNs: l.captureStartNs ?? 0, durationNs: l.captureEndNs - (l.captureStartNs ?? 0) });
    evidence.push({ text: `after the capture: ${l.opsAfterCapture} GPU ops, ${formatNs(l.opNsAfterCapture)} (${pct(l.gpuOpNs ? l.opNsAfterCapture / l.gpuOpNs : 0)} of the ${formatNs(l.gpuOpNs)} of GPU op time): no step replayed the graphs` });
  } else return [];
  if (ctx.input.iterationError) evidence.push({ text: `no iterations: ${ctx.input.iterationError}` });
  return [
    healthFinding(ctx, 'serving-loop-missing', {
      title: `The serving loop is not in the capture: only start-up GPU work (${what})`,
      evidence,
      estimate: 'not applicable: no serving step was recorded',
      section: 'run',
      health: 'blocking',
    }),
  ];
}

/** Median of a non-empty list. */
function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Compute kernel time at least this many times its phase's median: warm-up work (autotuning, first compilation), not a step. */
const WARMUP_FACTOR = 3;

/** Kernel time without collectives: a rank waiting in an all-reduce for another is not doing warm-up work. */
const computeNs = (r: IterationRow) => r.kernelNs - (r.categoryNs.communication ?? 0);

/**
 * Leading iterations whose compute kernel time is `WARMUP_FACTOR` x their phase's median (known
 * phases of 3+ iterations only: a prefill is not compared with decode steps). Per iteration, not
 * per token: a mixed step's cost does not follow its token count.
 */
function slowLeadingIterations(rows: IterationRow[]): { row: IterationRow; factor: number }[] {
  const byPhase = new Map<string, number[]>();
  for (const r of rows) {
    if (r.phase === 'unknown' || r.phase === 'empty') continue;
    const times = byPhase.get(r.phase);
    if (times) times.push(computeNs(r));
    else byPhase.set(r.phase, [computeNs(r)]);
  }
  const medians = new Map([...byPhase].filter(([, v]) => v.length >= 3).map(([p, v]) => [p, median(v)]));
  const out: { row: IterationRow; factor: number }[] = [];
  for (const r of rows) {
    const m = medians.get(r.phase);
    if (m === undefined || m <= 0 || computeNs(r) < WARMUP_FACTOR * m) break;
    out.push({ row: r, factor: computeNs(r) / m });
  }
  return out;
}

/** The window holds warm-up: CUDA-graph capture inside the iterations, or leading iterations with several times the GPU work. */
export function warmupInWindow(ctx: HealthRuleContext): Finding[] {
  const { health: h, iterations } = ctx.input;
  const rows = [...(iterations?.iterations ?? [])].sort((a, b) => a.startNs - b.startNs);
  if (rows.length < 4) return [];
  const l = h.launches;
  const evidence: Evidence[] = [];
  let exclude: IterationRow[] = [];
  if (l && l.captureCalls > 0 && l.captureStartNs !== null && l.captureEndNs !== null && l.captureEndNs > rows[0].startNs && l.captureStartNs < rows[rows.length - 1].endNs) {
    const last = rows.reduce((k, r, i) => (r.startNs < l.captureEndNs! ? i : k), 0);
    exclude = rows.slice(0, last + 1);
    evidence.push({ text: `CUDA-graph capture from ${formatNs(l.captureStartNs)} to ${formatNs(l.captureEndNs)}, inside iteration ${rows[last].iter}'s window or before it`, startNs: l.captureStartNs, durationNs: l.captureEndNs - l.captureStartNs, iter: rows[last].iter });
  }
  const slow = slowLeadingIterations(rows);
  if (slow.length > exclude.length) exclude = slow.map((x) => x.row);
  for (const { row: r, factor } of slow.slice(0, ctx.t.evidenceRows)) {
    const ns = computeNs(r);
    evidence.push({ text: `iteration ${r.iter} (${r.phase}): ${formatNs(ns)} of kernel time outside collectives, ${factor.toFixed(1)}x the ${r.phase} median`, iter: r.iter, startNs: r.startNs, durationNs: r.wallNs, valueNs: ns });
  }
  if (exclude.length === 0 || exclude.length === rows.length) return [];
  const iters = compactRanges(exclude.map((r) => r.iter).sort((a, b) => a - b));
  return [
    healthFinding(ctx, 'warmup-in-window', {
      title: `Warm-up inside the capture window: exclude iterations ${iters} from steady-state numbers`,
      evidence,
      estimate: 'not applicable: warm-up is not steady-state time; it skews per-iteration means',
      section: 'iterations',
      health: 'caveat',
      remedyPrefix: `Iterations ${iters} are warm-up, not the serving loop: leave them out of comparisons.`,
    }),
  ];
}

/** Whole-graph rows (`--cuda-graph-trace graph`): the kernels inside each graph launch are not in the export. */
export function graphLevelTrace(ctx: HealthRuleContext): Finding[] {
  const { health: h, info } = ctx.input;
  const l = h.launches;
  const rows = l ? l.graphRows : (info.rowCounts.CUPTI_ACTIVITY_KIND_GRAPH_TRACE ?? 0);
  if (rows === 0) return [];
  const share = l && l.gpuOpNs > 0 ? l.graphRowNs / l.gpuOpNs : null;
  const evidence: Evidence[] = [
    { text: `${rows} whole-graph rows (CUPTI_ACTIVITY_KIND_GRAPH_TRACE)${l ? `, ${formatNs(l.graphRowNs)}${share !== null ? `: ${pct(share)} of the ${formatNs(l.gpuOpNs)} of GPU op time` : ''}` : ''}; the kernels inside each graph launch are not recorded` },
    { text: `CUDA-graph trace mode: ${info.graphTraceModeConfigured ?? 'not recorded'} as configured, ${info.graphTraceMode} in the rows; ${l ? `${l.kernels} kernel rows outside graphs` : ''}`.replace(/; $/, '') },
    { text: 'kernel tables and categories count each graph launch as one row (`kernels --graphs`): no per-kernel breakdown of that time' },
  ];
  return [
    healthFinding(ctx, 'graph-level-trace', {
      title: `CUDA graphs traced whole (--cuda-graph-trace graph): ${share !== null ? `${pct(share)} of GPU op time` : 'the graph launches'} without a per-kernel breakdown`,
      evidence,
      estimate: 'not applicable: a limit of what was recorded',
      section: 'kernels',
      severity: share === null || share >= 0.5 ? 'high' : 'medium',
      health: 'caveat',
    }),
  ];
}

/** An iteration's marker range never closed: the capture stopped inside it (`--duration`, a kill). */
export function captureCut(ctx: HealthRuleContext): Finding[] {
  const { health: h, iterations } = ctx.input;
  const cut = iterations?.coverage.unclosedRanges ?? [];
  if (cut.length === 0) return [];
  const iters = compactRanges([...cut].sort((a, b) => a - b));
  const rows = iterations!.iterations.filter((r) => cut.includes(r.iter));
  return [
    healthFinding(ctx, 'capture-cut', {
      title: `The capture ended inside iteration ${iters}: exclude it`,
      evidence: [
        ...rows.map((r) => ({ text: `iteration ${r.iter}: its NVTX range (${r.label}) never closed; what was recorded of it runs ${formatNs(r.startNs)}..${formatNs(r.endNs)}`, iter: r.iter, startNs: r.startNs, durationNs: r.wallNs })),
        ...h.incompleteCollection.map((d) => ({ text: quote(d) })),
      ],
      estimate: 'not applicable: the iteration was not recorded whole',
      section: 'iterations',
      severity: 'medium',
      health: 'caveat',
      remedyPrefix: `Leave iteration ${iters} out of comparisons.`,
    }),
  ];
}

/** Every health rule, blocking ones first in the order they explain each other. */
export function healthFindings(ctx: HealthRuleContext): Finding[] {
  return [...noGpuWork(ctx), ...programCrashed(ctx), ...eventsLost(ctx), ...servingLoopMissing(ctx), ...warmupInWindow(ctx), ...graphLevelTrace(ctx), ...captureCut(ctx)];
}

