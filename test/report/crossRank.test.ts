import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const ranks = [fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')];

describe('report with one export per rank', () => {
  it('adds an "Across ranks" section whose table is the `ranks` command output', () => {
    const report = runCli(['report', ...ranks, '--format', 'md']);
    expect(report.status).toBe(0);
    const md = report.stdout;
    expect(md).toContain('## Across ranks');
    const view = runCli(['ranks', ...ranks, '--format', 'md']);
    expect(view.status).toBe(0);
    // Every row `ranks` prints (40 iterations 30..69, then the per-rank totals) is in the report.
    const rows = view.stdout.split('\n').filter((l) => /^\| \d+ \|/.test(l));
    expect(rows.filter((l) => /^\| (3\d|[4-6]\d) \|/.test(l)).length).toBe(40);
    for (const row of rows) expect(md).toContain(row);
  });
  it('a single export has no cross-rank section', () => {
    const r = runCli(['report', ranks[0], '--format', 'md']);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('## Across ranks');
  });
});
