import { UsageError } from '../errors.js';
import { coverage } from './rules/coverage.js';
import { healthFindings } from './rules/health.js';
import { gcPauses, gilContention, hostSync, lateLaunches } from './rules/hostCauseFindings.js';
import { launchBound } from './rules/launchBound.js';
import { memoryTraffic } from './rules/memory.js';
import { phaseOutliers } from './rules/phaseOutliers.js';
import { layerFindings } from './rules/layers.js';
import { moeRouting, stragglers } from './rules/scale.js';
import { DEFAULT_THRESHOLDS, FINDINGS_SCHEMA, type Finding, type FindingThresholds, type FindingsInput, type FindingsOptions, type FindingsResult, type HealthFindingsInput, type RuleContext, type Severity } from './finding.js';
import type { Engine } from '../iterations/source.js';

/** The engine whose remedies apply, from what the export recorded. */
export function remediesEngine(input: Pick<FindingsInput, 'info' | 'iterations'>): Engine {
  if (input.info.nvtxDomains.some((d) => d.name === 'TensorRT-LLM')) return 'tensorrt-llm';
  const label = input.iterations?.iterations[0]?.label ?? '';
  if (/^\[Executor\]|TrtGptModelInflightBatching/.test(label)) return 'tensorrt-llm';
  if (/^execute_context_\d+\(/.test(label)) return 'vllm';
  if (label === 'scheduler.run_batch' || /^step\[/.test(label)) return 'sglang';
  if (Object.keys(input.info.environment).some((k) => k.startsWith('TLLM_'))) return 'tensorrt-llm';
  return 'unknown';
}

/** Thresholds with overrides; unknown keys and non-finite or negative values are usage errors. */
export function resolveThresholds(overrides: Partial<FindingThresholds> = {}, source = 'thresholds'): FindingThresholds {
  const out: FindingThresholds = { ...DEFAULT_THRESHOLDS };
  for (const [k, v] of Object.entries(overrides)) {
    if (!(k in DEFAULT_THRESHOLDS)) throw new UsageError(`${source}: unknown threshold '${k}' (known: ${Object.keys(DEFAULT_THRESHOLDS).join(', ')})`);
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new UsageError(`${source}: threshold '${k}' must be a non-negative number (got ${JSON.stringify(v)})`);
    (out as unknown as Record<string, number>)[k] = v;
  }
  return out;
}

const SEVERITY_ORDER: Record<Severity, number> = { high: 0, medium: 1, low: 2, info: 3 };

/**
 * Findings from one export's analysis: each rule reads the analysis (never the export), states
 * what it rests on, clamps its estimate to that, and names a remedy for the engine. Blocking
 * health findings (the capture cannot answer) first, then by recoverable time, severity, id.
 */
export function findFindings(input: FindingsInput, opts: FindingsOptions = {}): FindingsResult {
  const t = resolveThresholds(opts.thresholds);
  const rows = input.iterations?.iterations ?? [];
  let wallNs = rows.reduce((a, r) => a + r.wallNs, 0);
  let wallSource: FindingsResult['basis']['wallSource'] = rows.length ? 'iterations' : 'none';
  if (!rows.length) {
    wallNs = input.gaps.devices.reduce((a, d) => Math.max(a, d.spanNs), 0);
    if (wallNs > 0) wallSource = 'gpu-span';
  }
  const ctx = ruleContext(input, t, wallNs);
  const findings: Finding[] = [
    ...healthFindings(ctx),
    ...gcPauses(ctx),
    ...gilContention(ctx),
    ...launchBound(ctx),
    ...hostSync(ctx),
    ...lateLaunches(ctx),
    ...memoryTraffic(ctx),
    ...phaseOutliers(ctx),
    ...stragglers(ctx),
    // Only when the layer split ran (`layers` part): no other analysis gains a finding.
    ...layerFindings(ctx, input.layers),
    ...(opts.moeRouting ? moeRouting(ctx, opts.moeRouting) : []),
    ...coverage(ctx),
  ];
  // A capture that cannot answer says so first: blocking health findings lead, in rule order (the
  // sort is stable); the others by recoverable time, severity, id.
  const blocking = (f: Finding) => (f.health === 'blocking' ? 0 : 1);
  findings.sort((a, b) => blocking(a) - blocking(b) || (blocking(a) === 0 ? 0 : b.recoverableNs - a.recoverableNs || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return { schema: FINDINGS_SCHEMA, file: input.file, engine: ctx.engine, basis: { iterations: rows.length, wallNs, wallSource }, thresholds: t, findings };
}

/** The context every rule gets: shares of `wallNs`, severity by share, the engine whose remedies apply. */
function ruleContext<I extends HealthFindingsInput>(input: I, t: FindingThresholds, wallNs: number): Omit<RuleContext, 'input'> & { input: I } {
  const share = (ns: number) => (wallNs > 0 ? ns / wallNs : null);
  return {
    input,
    t,
    engine: remediesEngine(input),
    wallNs,
    share,
    severity: (ns) => {
      const s = share(ns) ?? 0;
      return s >= t.highShare ? 'high' : s >= t.mediumShare ? 'medium' : 'low';
    },
  };
}

/**
 * Only the health findings (what the capture can answer), from the parts they read: for a command
 * that shows them beside its own figures (`engines`) without the gaps and host analyses.
 */
export function findHealthFindings(input: HealthFindingsInput, opts: Pick<FindingsOptions, 'thresholds'> = {}): Finding[] {
  const wallNs = (input.iterations?.iterations ?? []).reduce((a, r) => a + r.wallNs, 0);
  return healthFindings(ruleContext(input, resolveThresholds(opts.thresholds), wallNs));
}
