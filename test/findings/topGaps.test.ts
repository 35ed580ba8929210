/**
 * `topGaps` (the evidence rows of the host-cause findings) keeps the first rows of a stable sort
 * (most time of the matched causes, then earliest) while it scans, instead of sorting every gap:
 * it must give what the sort gives, ties and fractional row counts included.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import type { GapAnalysis, GapRow } from '../../src/gaps/analyzeGaps.js';
import { gapPartNs, topGaps } from '../../src/findings/rules/common.js';
import type { RuleContext } from '../../src/findings/finding.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { fixture } from '../helpers/fixtures.js';

/** The definition: every gap's part, the positive ones sorted (stable), the first `rows`. */
function bySort(g: GapAnalysis, rows: number, match: (c: string) => boolean) {
  return g.gaps
    .filter((r) => !g.iterationsFound || r.iter !== null)
    .map((gap) => ({ gap, partNs: gapPartNs(gap, match) }))
    .filter((x) => x.partNs > 0)
    .sort((a, b) => b.partNs - a.partNs || a.gap.startNs - b.gap.startNs)
    .slice(0, rows);
}

const ctxOf = (gaps: GapAnalysis, evidenceRows: number) => ({ input: { gaps }, t: { evidenceRows } }) as unknown as RuleContext;

describe('pytorch-dense: topGaps equals the sorted definition', () => {
  const gaps = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) =>
    analyzeExport(h, { parts: ['gaps', 'iterations'], logs: [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))] }),
  ).gaps!;
  const matchers: [string, (c: string) => boolean][] = [
    ['launch_late', (c) => c === 'launch_late'],
    ['nvtx', (c) => c.startsWith('nvtx:')],
    ['any', () => true],
  ];

  it.each(matchers)('%s, 0 / 1 / 2.5 / 5 / every row, with and without iterations', (_, match) => {
    expect(gaps.gaps.length).toBeGreaterThan(100);
    expect(gaps.iterationsFound).toBe(true);
    // Without iterations every gap counts (the rules read the whole capture).
    const flat: GapAnalysis = { ...gaps, iterationsFound: false };
    for (const g of [gaps, flat]) {
      for (const rows of [0, 1, 2.5, 5, g.gaps.length + 1]) expect(topGaps(ctxOf(g, rows), match)).toEqual(bySort(g, rows, match));
    }
    expect(bySort(gaps, 5, match).length).toBeGreaterThan(0);
  });

  it('ties keep the gaps in table order, as a stable sort does', () => {
    // Every gap given the same start and the same single cause: the order is the input's.
    const same: GapRow[] = gaps.gaps.slice(0, 50).map((r) => ({ ...r, startNs: 0, causes: { unattributed: 7 } }));
    const g: GapAnalysis = { ...gaps, iterationsFound: false, gaps: same };
    expect(topGaps(ctxOf(g, 5), () => true).map((x) => x.gap)).toEqual(same.slice(0, 5));
  });
});
