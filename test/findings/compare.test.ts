import { beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/compare/compareRuns.js';
import { loadRun } from '../../src/summary/loadRun.js';
import { findingChanges } from '../../src/findings/digest.js';
import type { RunSummary } from '../../src/summary/runSummary.js';
import { fixture } from '../helpers/fixtures.js';

describe('compare: findings that appeared or disappeared', () => {
  let dense: RunSummary;
  let metrics: RunSummary;
  beforeAll(() => {
    dense = loadRun(fixture('pytorch-dense', 'trace.sqlite'));
    metrics = loadRun(fixture('pytorch-gpu-metrics', 'trace.sqlite'));
  });

  it('summaries carry the run\'s findings by stable id', () => {
    const ids = dense.findings!.map((f) => f.id);
    expect(ids).toContain('gil-contention');
    expect(ids).toContain('gc-pauses');
    // pytorch-gpu-metrics has no GIL trace: the coverage finding says which findings that hides.
    const cov = metrics.findings!.find((f) => f.id === 'coverage')!;
    expect(cov.hides).toContain('gil-contention');
    expect(cov.hides).not.toContain('gc-pauses');
    expect(metrics.findings!.map((f) => f.id)).not.toContain('gil-contention');
  });

  it('a finding the head could not trace is "not traced in head", not "disappeared"', () => {
    const c = compareRuns(dense, metrics);
    expect(c.findings).not.toBeNull();
    const f = c.findings!;
    expect(f.disappeared.map((x) => x.id)).not.toContain('gil-contention');
    expect(f.untraced.map((x) => [x.id, x.missingIn])).toContainEqual(['gil-contention', 'head']);
    // Every base finding is accounted for exactly once.
    const baseIds = dense.findings!.filter((x) => x.id !== 'coverage').map((x) => x.id).sort();
    const seen = [...f.disappeared.map((x) => x.id), ...f.persisted.map((x) => x.id), ...f.untraced.filter((x) => x.missingIn === 'head').map((x) => x.id)].sort();
    expect(seen).toEqual(baseIds);
    // The same pair the other way round: it appears in head only as "not traced in base".
    const back = compareRuns(metrics, dense).findings!;
    expect(back.appeared.map((x) => x.id)).not.toContain('gil-contention');
    expect(back.untraced.map((x) => [x.id, x.missingIn])).toContainEqual(['gil-contention', 'base']);
  });

  it('a run against itself: nothing appears or disappears', () => {
    const same = findingChanges(dense.findings!, dense.findings!);
    expect(same.appeared).toEqual([]);
    expect(same.disappeared).toEqual([]);
    expect(same.persisted.every((p) => p.baseNs === p.headNs)).toBe(true);
    expect(same.persisted.length).toBe(dense.findings!.filter((x) => x.id !== 'coverage').length);
  });
});
