import { callEnd, type ApiCallColumns } from '../load/apiCallColumns.js';
import { captureSettings, traceNames, type CaptureTracing } from '../load/captureSettings.js';
import { GPU_OP_KIND_NAMES, GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import { activityPerProcess, diagnosticRows, outputStreamRows, processNames, recordedActivity, type RecordedActivity } from '../load/healthReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { KINETO_TABLES_READ } from '../kineto/trace/traceNotes.js';

export type { RecordedActivity };

/** One message nsys itself reported (`DIAGNOSTIC_EVENT`), repeats folded. */
export interface NsysDiagnostic {
  severity: 'warning' | 'error';
  text: string;
  /** How many times nsys reported it (e.g. once per process). */
  count: number;
  /** Session ns of the first report (negative: before the session started). */
  firstNs: number;
  /** Processes it was about (nsys's own messages: none). */
  pids: number[];
}

/** One output stream of a profiled process, as nsys stored it (`ProcessStreams` -> `StringIds`). */
export interface ProgramOutput {
  pid: number;
  stream: 'stdout' | 'stderr' | 'other';
  file: string;
  /** Non-empty lines in the stream. */
  lines: number;
  /** The last non-empty lines (at most `OUTPUT_TAIL_LINES`), ANSI colour codes removed. */
  tail: string[];
}

/** A profiled program that died: the error its stderr ends with. */
export interface ProgramCrash {
  pid: number;
  /** The line that says what killed it (a Python exception line, a fatal native error). */
  errorLine: string;
  tail: string[];
}

/** A process active in the capture, and what it did (read only for captures without GPU work). */
export interface ProfiledProcess {
  pid: number;
  name: string | null;
  /** The command nsys launched, for the launched process. */
  command: string | null;
  threads: number;
  cpuSamples: number;
  schedEvents: number;
  osrtCalls: number;
  cudaCalls: number;
  nvtxEvents: number;
}

/**
 * The GPU work around CUDA-graph capture, from the pipeline's GPU-op and API-call columns: what
 * tells start-up (model load, graph capture) from the serving loop, and how much of the GPU time
 * only whole-graph rows describe.
 */
export interface LaunchPhases {
  gpuOps: number;
  gpuOpNs: number;
  kernels: number;
  /** Whole-graph rows (`--cuda-graph-trace graph`) and their summed time. */
  graphRows: number;
  graphRowNs: number;
  /** cudaStreamBeginCapture / EndCapture / cudaGraphInstantiate calls (driver API too). */
  captureCalls: number;
  captureStartNs: number | null;
  captureEndNs: number | null;
  /** GPU ops that started after the last capture call ended, and their summed time. */
  opsAfterCapture: number;
  opNsAfterCapture: number;
}

/** What NVTX_EVENTS tells about NVTX: events recorded, traced with none recorded, not traced, or not known. */
export type NvtxState = 'recorded' | 'traced-none' | 'not-traced' | 'unknown';

/**
 * Whether a capture can answer at all, and why not: what nsys was asked to trace and what it
 * recorded, nsys's own warnings and errors, the profiled program's output and whether it crashed,
 * and for a capture without GPU work, which processes ran and what they did.
 */
export interface CaptureHealth {
  /** The command nsys launched (secrets masked); null when the export does not say. */
  command: string | null;
  tracing: CaptureTracing;
  recorded: RecordedActivity;
  nvtx: NvtxState;
  /** nsys's warnings and errors, in time order. */
  diagnostics: NsysDiagnostic[];
  /** The diagnostics that say events were dropped or lost (buffers full, overflow). */
  eventLoss: NsysDiagnostic[];
  /** "Not all ... events might have been collected": the program was stopped before nsys flushed. */
  incompleteCollection: NsysDiagnostic[];
  output: ProgramOutput[];
  crash: ProgramCrash | null;
  /** One line: why there is no GPU work; null when some was recorded. */
  noGpuWork: string | null;
  /** The processes active in the capture: filled when no GPU work was recorded, else empty. */
  processes: ProfiledProcess[];
  /** From the GPU-op and API-call columns when the analysis read them; null otherwise. */
  launches: LaunchPhases | null;
  /**
   * The input is a converted PyTorch profiler trace (no nsys capture settings or diagnostics): its
   * CPU ops, null when the command converted only some tables (`kernels`) and not those.
   */
  kineto: { cpuOps: number | null } | null;
}

export const OUTPUT_TAIL_LINES = 8;

/** Diagnostics that say events were lost, not merely that a collector found nothing. */
const EVENT_LOSS = /\b(dropped|lost|overflow(ed|s)?|discarded)\b|buffers? (is |was |were )?full/i;
const INCOMPLETE_COLLECTION = /^Not all .*events might have been collected/i;

function severityOf(id: number, label: string | null): NsysDiagnostic['severity'] | null {
  const l = label?.toLowerCase();
  if (l === 'warning' || l === 'error') return l;
  if (label != null) return null;
  return id === 2 ? 'warning' : id === 3 ? 'error' : null;
}

/** nsys's warnings and errors, repeats of one text folded into one entry. */
export function readDiagnostics(loaded: LoadedExport): NsysDiagnostic[] {
  const byText = new Map<string, NsysDiagnostic>();
  for (const r of diagnosticRows(loaded)) {
    const severity = severityOf(Number(r.severity), r.severityLabel ?? null);
    if (!severity || typeof r.text !== 'string') continue;
    const text = cleanLine(r.text);
    const key = `${severity}\u0000${text}`;
    const d = byText.get(key) ?? { severity, text, count: 0, firstNs: Number(r.timestamp), pids: [] };
    d.count++;
    if (r.pid && !d.pids.includes(r.pid)) d.pids.push(r.pid);
    byText.set(key, d);
  }
  return [...byText.values()].sort((a, b) => a.firstNs - b.firstNs);
}

/** A line of program output or nsys text for people: ANSI colour codes and control characters removed. */
function cleanLine(line: string): string {
  return line
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .trimEnd();
}

function streamKind(file: string): ProgramOutput['stream'] {
  return /stderr/i.test(file) ? 'stderr' : /stdout/i.test(file) ? 'stdout' : 'other';
}

/** The profiled programs' stdout/stderr, as nsys stored them (`ProcessStreams`, else `ANALYSIS_FILE`). */
export function readProgramOutput(loaded: LoadedExport): ProgramOutput[] {
  return outputStreamRows(loaded)
    .filter((r) => typeof r.file === 'string')
    .map((r) => {
      const lines = (typeof r.content === 'string' ? r.content : '').split(/\r?\n/).map(cleanLine).filter((l) => l.trim() !== '');
      return { pid: r.pid, stream: streamKind(r.file as string), file: r.file as string, lines: lines.length, tail: lines.slice(-OUTPUT_TAIL_LINES) };
    })
    // `stream` is one of three lowercase words: plain comparison orders them as localeCompare did, without loading ICU's collator.
    .sort((a, b) => a.pid - b.pid || (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
}

/** The final line of a Python traceback: `pkg.module.SomeError: message`. */
const PYTHON_EXCEPTION = /^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Failure|Fault|Abort)\b(?::.*)?$/;
/** Not a crash: the user stopped the program, or it exited on purpose with status 0. */
const NOT_A_CRASH = /^(?:KeyboardInterrupt|SystemExit(?::\s*0)?\s*$)/;
const NATIVE_FATAL = /^(?:Segmentation fault|Aborted|Bus error|Fatal Python error:|terminate called after throwing|Illegal instruction|Floating point exception)/;

/**
 * Whether a stderr tail ends the way a crashed program's does: a Python traceback whose exception
 * line is last (KeyboardInterrupt and `SystemExit: 0` excepted), or a fatal native error.
 */
export function crashOf(stderr: ProgramOutput): ProgramCrash | null {
  const tail = stderr.tail;
  for (let i = tail.length - 1; i >= 0; i--) {
    const line = tail[i].trim();
    if (NATIVE_FATAL.test(line)) return { pid: stderr.pid, errorLine: line, tail };
    // Only the exception line of a traceback (unindented, after `Traceback ...`); other stderr
    // lines (warnings, log lines) end a healthy run too.
    if (i === tail.length - 1 && !/^\s/.test(tail[i]) && PYTHON_EXCEPTION.test(line) && !NOT_A_CRASH.test(line) && tail.some((l) => l.startsWith('Traceback (most recent call last):') || /^\s+File "/.test(l))) {
      return { pid: stderr.pid, errorLine: line, tail };
    }
  }
  return null;
}

export const hasGpuWork = (r: RecordedActivity) => r.kernels || r.memcpys || r.memsets || r.graphRows;

function nvtxState(recorded: RecordedActivity, tracing: CaptureTracing): NvtxState {
  if (recorded.nvtx) return 'recorded';
  return tracing.nvtx === true ? 'traced-none' : tracing.nvtx === false ? 'not-traced' : 'unknown';
}

const ACTIVITY_TABLES: readonly [Parameters<typeof activityPerProcess>[1], keyof Pick<ProfiledProcess, 'cpuSamples' | 'schedEvents' | 'osrtCalls' | 'cudaCalls' | 'nvtxEvents'>][] = [
  ['COMPOSITE_EVENTS', 'cpuSamples'],
  ['SCHED_EVENTS', 'schedEvents'],
  ['OSRT_API', 'osrtCalls'],
  ['CUPTI_ACTIVITY_KIND_RUNTIME', 'cudaCalls'],
  ['NVTX_EVENTS', 'nvtxEvents'],
];

/**
 * The processes the capture saw active: the ones nsys launched (their output streams) and every
 * pid with CPU samples, scheduling, OS-runtime, CUDA API or NVTX rows. `PROCESSES` lists the
 * whole machine's processes, so it only names them.
 */
export function profiledProcesses(loaded: LoadedExport, output: readonly ProgramOutput[], command: string | null): ProfiledProcess[] {
  const byPid = new Map<number, ProfiledProcess>();
  const entry = (pid: number) => {
    let p = byPid.get(pid);
    if (!p) byPid.set(pid, (p = { pid, name: null, command: null, threads: 0, cpuSamples: 0, schedEvents: 0, osrtCalls: 0, cudaCalls: 0, nvtxEvents: 0 }));
    return p;
  };
  const launched = new Set(output.map((o) => o.pid));
  for (const pid of launched) entry(pid).command = command;
  for (const [table, field] of ACTIVITY_TABLES) {
    for (const r of activityPerProcess(loaded, table)) {
      if (!r.pid) continue;
      const p = entry(r.pid);
      p[field] += r.events;
      p.threads = Math.max(p.threads, r.threads);
    }
  }
  if (byPid.size) {
    for (const r of processNames(loaded)) if (r.pid != null && byPid.has(Number(r.pid))) byPid.get(Number(r.pid))!.name ??= r.name;
  }
  return [...byPid.values()].sort((a, b) => Number(launched.has(b.pid)) - Number(launched.has(a.pid)) || a.pid - b.pid);
}

/** `pid 604 python3 (python3 /tmp/client_only.py)`. */
export function processLabel(p: Pick<ProfiledProcess, 'pid' | 'name' | 'command'>): string {
  return `pid ${p.pid}${p.name ? ` ${p.name}` : ''}${p.command ? ` (\`${p.command}\`)` : ''}`;
}

const quoteDiag = (d: NsysDiagnostic) => `nsys: "${d.text}"`;

/** The diagnostic nsys reports when CUDA was traced and none of it happened. */
export function noCudaDiagnostic(diagnostics: readonly NsysDiagnostic[]): NsysDiagnostic | null {
  return diagnostics.find((d) => /^No CUDA events collected/i.test(d.text)) ?? null;
}

/** `pid 1 a and pid 2 b` (at most three). */
function processList(ps: readonly ProfiledProcess[]): string {
  const labels = ps.slice(0, 3).map(processLabel);
  return labels.length > 1 ? `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}` : labels[0];
}

/** Whether a converted PyTorch profiler trace had `table` written (a partial conversion names what it wrote). */
function kinetoTableRead(loaded: LoadedExport, table: string): boolean {
  const read = loaded.metadata.values.get(KINETO_TABLES_READ);
  return read == null || read.split(',').includes(table);
}

/** One line: why the export holds no GPU work (a crash, no CUDA call, CUDA not traced, a profiler trace without GPU activity). */
function whyNoGpuWork(h: Omit<CaptureHealth, 'noGpuWork' | 'launches'>): string {
  if (h.kineto?.cpuOps === null) return 'the PyTorch profiler trace holds no kernel (this command reads only its kernels; recorded without CUDA activity, or while nsys held CUPTI)';
  if (h.kineto) return `the PyTorch profiler trace holds ${h.kineto.cpuOps} CPU ops and no kernel, memcpy or memset (recorded without CUDA activity, or while nsys held CUPTI)`;
  const launched = h.processes.filter((p) => p.command !== null);
  const who = launched.length ? processList(launched) : h.processes.length ? processList(h.processes) : h.command ? `\`${h.command}\`` : 'the profiled program';
  if (h.crash) return `${who} exited with \`${h.crash.errorLine}\``;
  if (h.tracing.cuda === false) return `CUDA was not traced (the capture's -t was ${traceNames(h.tracing).join(',') || 'empty'})`;
  const callers = h.processes.filter((p) => p.cudaCalls > 0);
  if (callers.length) return `${processList(callers)} called the CUDA API (${callers.reduce((a, p) => a + p.cudaCalls, 0)} calls) but no kernel, memcpy or memset was recorded`;
  const diag = noCudaDiagnostic(h.diagnostics);
  return `${who} made no CUDA call${diag ? ` (${quoteDiag(diag)})` : ''}`;
}

/**
 * What the capture can answer, from the export's small tables (capture settings, diagnostics,
 * output streams, one b-tree lookup per event table), read once per export. `launches` is left
 * null: the health part adds it from the GPU-op and API-call columns (`launchPhases`) when they are read.
 */
export function describeCaptureHealth(loaded: LoadedExport): CaptureHealth {
  return loaded.cached('captureHealth', () => readCaptureHealth(loaded));
}

function readCaptureHealth(loaded: LoadedExport): CaptureHealth {
  const capture = captureSettings(loaded);
  const recorded = recordedActivity(loaded);
  const diagnostics = readDiagnostics(loaded);
  const output = readProgramOutput(loaded);
  const stderr = output.filter((o) => o.stream === 'stderr');
  const crash = stderr.map(crashOf).find((c) => c !== null) ?? null;
  const gpuWork = hasGpuWork(recorded);
  const base = {
    command: capture.command,
    tracing: capture.tracing,
    recorded,
    nvtx: nvtxState(recorded, capture.tracing),
    diagnostics,
    eventLoss: diagnostics.filter((d) => EVENT_LOSS.test(d.text) && !INCOMPLETE_COLLECTION.test(d.text)),
    incompleteCollection: diagnostics.filter((d) => INCOMPLETE_COLLECTION.test(d.text)),
    output,
    crash,
    // Only without GPU work: then the processes are what the capture has to say.
    processes: gpuWork ? [] : profiledProcesses(loaded, output, capture.command),
    kineto: loaded.hasTable('KINETO_CPU_OPS') ? { cpuOps: kinetoTableRead(loaded, 'KINETO_CPU_OPS') ? loaded.rowBound('KINETO_CPU_OPS') : null } : null,
  };
  return { ...base, noGpuWork: gpuWork ? null : whyNoGpuWork(base), launches: null };
}

/** cudaStreamBeginCapture, cudaStreamEndCapture, cudaGraphInstantiate* (runtime and driver API, any version suffix). */
const GRAPH_CAPTURE_CALL = /^cu(da)?(StreamBeginCapture|StreamEndCapture|GraphInstantiate)/;

/**
 * See `LaunchPhases`: the API calls' names resolved once per distinct id, one pass over the calls,
 * one over the ops (each pass a function of its own: a long loop is optimized once, and leaving it
 * deoptimizes nothing that has not run yet).
 */
export function launchPhases(loaded: LoadedExport): LaunchPhases {
  const ops: GpuOpColumns = loaded.gpuOps();
  const capture = graphCaptureSpan(loaded, loaded.apiCalls());
  const totals = opTotals(ops, capture.calls ? capture.endNs : Infinity);
  return {
    gpuOps: ops.count,
    gpuOpNs: totals.gpuOpNs,
    kernels: totals.countByKind[GpuOpKind.Kernel],
    graphRows: totals.countByKind[GpuOpKind.Graph],
    graphRowNs: totals.nsByKind[GpuOpKind.Graph],
    captureCalls: capture.calls,
    captureStartNs: capture.calls ? capture.startNs : null,
    captureEndNs: capture.calls ? capture.endNs : null,
    opsAfterCapture: totals.opsAfter,
    opNsAfterCapture: totals.opNsAfter,
  };
}

/** The graph-capture calls: how many, from the first one's start to the last one's end. */
function graphCaptureSpan(loaded: LoadedExport, calls: ApiCallColumns): { calls: number; startNs: number; endNs: number } {
  // Which name ids are graph-capture calls: a flag per id (ids are StringIds rows, a dense range).
  let maxId = -1;
  for (let i = 0; i < calls.count; i++) if (calls.nameId[i] > maxId) maxId = calls.nameId[i];
  const seen = new Uint8Array(maxId + 1); // 0 unseen, 1 other, 2 capture
  const span = { calls: 0, startNs: Infinity, endNs: -Infinity };
  for (let i = 0; i < calls.count; i++) {
    const id = calls.nameId[i];
    if (id < 0) continue;
    if (seen[id] === 0) seen[id] = GRAPH_CAPTURE_CALL.test(loaded.stringOf(id) ?? '') ? 2 : 1;
    if (seen[id] !== 2) continue;
    span.calls++;
    if (calls.start[i] < span.startNs) span.startNs = calls.start[i];
    const end = callEnd(calls, i);
    if (end > span.endNs) span.endNs = end;
  }
  return span;
}

/** The ops' time, count and time by kind, and those starting after `afterNs`. */
function opTotals(ops: GpuOpColumns, afterNs: number): { gpuOpNs: number; countByKind: Float64Array; nsByKind: Float64Array; opsAfter: number; opNsAfter: number } {
  const { start, end, kind } = ops;
  // By kind through lookups, not branches: memcpy and memset rows come after all the kernels.
  const countByKind = new Float64Array(GPU_OP_KIND_NAMES.length);
  const nsByKind = new Float64Array(GPU_OP_KIND_NAMES.length);
  let gpuOpNs = 0;
  let opsAfter = 0;
  let opNsAfter = 0;
  for (let i = 0; i < ops.count; i++) {
    const ns = end[i] - start[i];
    gpuOpNs += ns;
    countByKind[kind[i]]++;
    nsByKind[kind[i]] += ns;
    if (start[i] > afterNs) {
      opsAfter++;
      opNsAfter += ns;
    }
  }
  return { gpuOpNs, countByKind, nsByKind, opsAfter, opNsAfter };
}

/** One line: why the export has no NVTX range (not traced, traced with none recorded, or marks only). */
export function nvtxAbsence(h: Pick<CaptureHealth, 'nvtx' | 'tracing' | 'diagnostics'>): string {
  const diag = h.diagnostics.find((d) => /^No NVTX events collected/i.test(d.text));
  switch (h.nvtx) {
    case 'traced-none':
      return `NVTX was traced (-t nvtx) but no NVTX event was recorded: the program emits none${diag ? ` (${quoteDiag(diag)})` : ''}`;
    case 'not-traced':
      return `NVTX was not traced: the capture's -t was ${traceNames(h.tracing).join(',') || 'empty'}`;
    case 'unknown':
      return 'the export has no NVTX events (it does not record whether NVTX was traced)';
    case 'recorded':
      return 'the export\'s NVTX events hold no range (marks or domain names only)';
  }
}

/** One line for a command whose result is empty because nothing ran on the GPU. */
export function noGpuWorkLine(h: Pick<CaptureHealth, 'noGpuWork'>): string | null {
  return h.noGpuWork ? `no GPU work was recorded: ${h.noGpuWork}` : null;
}
