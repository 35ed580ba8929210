import { InputError } from '../errors.js';

/**
 * Checks a parsed summary.json before `compare` or `merge` reads a number of it: every figure a
 * comparison or the cross-rank view uses must be a finite, non-negative number (a `null`, a
 * string, a negated or infinite figure in an edited baseline would otherwise pass the gate or
 * print NaN). The first problem is reported with its JSON path, e.g. `overall.meanGpuBusyNs`.
 */
export function validateSummary(json: unknown, path: string): void {
  const fail = (where: string, what: string, got: unknown): never => {
    const shown = typeof got === 'string' ? `'${got.length > 40 ? `${got.slice(0, 40)}...` : got}'` : Array.isArray(got) ? 'an array' : got === null ? 'null' : typeof got === 'object' ? 'an object' : String(got);
    throw new InputError('E_LOG', path, `malformed iterscope summary: ${where} is ${shown}, expected ${what}`);
  };
  const obj = (v: unknown, where: string): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(where, 'an object', v));
  const arr = (v: unknown, where: string): unknown[] => (Array.isArray(v) ? v : fail(where, 'an array', v));
  const ns = (v: unknown, where: string) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(where, 'a non-negative number', v);
  };
  const count = (v: unknown, where: string) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(where, 'a non-negative integer', v);
  };
  const nsRecord = (v: unknown, where: string) => {
    for (const [k, x] of Object.entries(obj(v, where))) ns(x, `${where}.${k}`);
  };
  const str = (v: unknown, where: string) => {
    if (typeof v !== 'string') fail(where, 'a string', v);
  };
  const phase = (v: unknown, where: string) => {
    const p = obj(v, where);
    count(p.iterations, `${where}.iterations`);
    for (const k of ['meanWallNs', 'meanGpuBusyNs', 'meanGpuIdleNs', 'meanKernelNs', 'meanMemcpyNs'] as const) ns(p[k], `${where}.${k}`);
    ns(p.idleShare, `${where}.idleShare`);
    if ((p.idleShare as number) > 1) fail(`${where}.idleShare`, 'a share between 0 and 1', p.idleShare);
    nsRecord(p.meanCategoryNs, `${where}.meanCategoryNs`);
    if (p.meanIdleByCauseNs !== undefined) nsRecord(p.meanIdleByCauseNs, `${where}.meanIdleByCauseNs`);
  };

  const s = obj(json, 'the summary');
  const run = obj(s.run, 'run');
  count(run.iterationsFound, 'run.iterationsFound');
  count(run.iterationsJoined, 'run.iterationsJoined');
  if (run.perfectRouter !== null && run.perfectRouter !== undefined && typeof run.perfectRouter !== 'boolean') fail('run.perfectRouter', 'true, false or null', run.perfectRouter);
  arr(s.categories, 'categories').forEach((c, i) => str(c, `categories[${i}]`));
  phase(s.overall, 'overall');
  for (const [k, v] of Object.entries(obj(s.phases, 'phases'))) phase(v, `phases.${k}`);
  arr(s.iterations, 'iterations').forEach((v, i) => {
    const it = obj(v, `iterations[${i}]`);
    if (typeof it.iter !== 'number' || !Number.isSafeInteger(it.iter)) fail(`iterations[${i}].iter`, 'an integer', it.iter);
    str(it.phase, `iterations[${i}].phase`);
    for (const k of ['wallNs', 'gpuBusyNs', 'gpuIdleNs', 'kernelNs'] as const) ns(it[k], `iterations[${i}].${k}`);
    nsRecord(it.categoryNs, `iterations[${i}].categoryNs`);
    for (const k of ['contextRequests', 'contextTokens', 'generationRequests'] as const) if (it[k] !== null && it[k] !== undefined) count(it[k], `iterations[${i}].${k}`);
  });
  arr(s.kernels, 'kernels').forEach((v, i) => {
    const k = obj(v, `kernels[${i}]`);
    str(k.name, `kernels[${i}].name`);
    ns(k.totalNs, `kernels[${i}].totalNs`);
    count(k.instances, `kernels[${i}].instances`);
  });
  gate(s, { fail, obj, arr, ns, count, str });
  arr(s.nvtx, 'nvtx').forEach((v, i) => {
    const r = obj(v, `nvtx[${i}]`);
    str(r.range, `nvtx[${i}].range`);
    ns(r.totalNs, `nvtx[${i}].totalNs`);
    count(r.instances, `nvtx[${i}].instances`);
  });
}

type Checks = {
  fail: (where: string, what: string, got: unknown) => never;
  obj: (v: unknown, where: string) => Record<string, unknown>;
  arr: (v: unknown, where: string) => unknown[];
  ns: (v: unknown, where: string) => void;
  count: (v: unknown, where: string) => void;
  str: (v: unknown, where: string) => void;
};

/** The gate's samples: every sketch a count, an exact sum and at most n finite, non-negative, sorted points. */
function gate(s: Record<string, unknown>, c: Checks): void {
  if (s.basis !== 'iterations' && s.basis !== 'kernel instances') c.fail('basis', "'iterations' or 'kernel instances'", s.basis);
  c.obj(s.capture, 'capture');
  const g = c.obj(s.gate, 'gate');
  const sketch = (v: unknown, where: string) => {
    const k = c.obj(v, where);
    c.count(k.n, `${where}.n`);
    c.ns(k.sum, `${where}.sum`);
    const points = c.arr(k.points, `${where}.points`);
    points.forEach((x, i) => c.ns(x, `${where}.points[${i}]`));
    if (points.length > (k.n as number)) c.fail(`${where}.points`, `at most n (${k.n}) points`, points.length);
    for (let i = 1; i < points.length; i++) if ((points[i] as number) < (points[i - 1] as number)) c.fail(`${where}.points`, 'sorted points', `unsorted at ${i}`);
  };
  if (g.iterations !== null) for (const [p, m] of Object.entries(c.obj(g.iterations, 'gate.iterations'))) for (const [k, v] of Object.entries(c.obj(m, `gate.iterations.${p}`))) sketch(v, `gate.iterations.${p}.${k}`);
  if (g.layers !== undefined) {
    for (const [p, v] of Object.entries(c.obj(c.obj(g.layers, 'gate.layers').phases, 'gate.layers.phases'))) {
      const ph = c.obj(v, `gate.layers.phases.${p}`);
      c.count(ph.steps, `gate.layers.phases.${p}.steps`);
      c.count(ph.layerCount, `gate.layers.phases.${p}.layerCount`);
      for (const [k, x] of Object.entries(c.obj(ph.samples, `gate.layers.phases.${p}.samples`))) sketch(x, `gate.layers.phases.${p}.samples.${k}`);
    }
  }
  if (g.span === null) return;
  const span = c.obj(g.span, 'gate.span');
  for (const k of ['spanNs', 'kernelNs'] as const) c.ns(span[k], `gate.span.${k}`);
  if (span.generatedTokens !== null) c.count(span.generatedTokens, 'gate.span.generatedTokens');
  for (const [k, v] of Object.entries(c.obj(span.categories, 'gate.span.categories'))) {
    const cat = c.obj(v, `gate.span.categories.${k}`);
    c.count(cat.instances, `gate.span.categories.${k}.instances`);
    c.ns(cat.totalNs, `gate.span.categories.${k}.totalNs`);
    c.ns(cat.withinNameSqNs, `gate.span.categories.${k}.withinNameSqNs`);
  }
  c.arr(span.kernelNames, 'gate.span.kernelNames').forEach((v, i) => {
    const k = c.obj(v, `gate.span.kernelNames[${i}]`);
    c.str(k.name, `gate.span.kernelNames[${i}].name`);
    c.ns(k.meanNs, `gate.span.kernelNames[${i}].meanNs`);
    sketch(k.durations, `gate.span.kernelNames[${i}].durations`);
  });
}
