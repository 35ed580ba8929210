import { beforeAll, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { findFindings } from '../../src/findings/findFindings.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import { fixture } from '../helpers/fixtures.js';

const LOGS = [fixture('pytorch-moe-window', 'iteration_log.txt'), fixture('pytorch-moe-window', 'executor.log')];

describe('report starts with the findings (pytorch-moe-window)', () => {
  let md: string;
  let html: string;
  let data: ReportData;
  beforeAll(async () => {
    const r = await runReport(fixture('pytorch-moe-window', 'trace.sqlite'), { log: LOGS });
    md = r.text;
    data = r.data;
    html = (await runReport(fixture('pytorch-moe-window', 'trace.sqlite'), { log: LOGS, format: 'html' })).text;
  });

  it('Markdown: the first section is Findings, in the engine\'s ranking, each linked to its section', () => {
    const headings = md.split('\n').filter((l) => l.startsWith('## '));
    expect(headings[0]).toBe('## Findings');
    const expected = findFindings(data).findings;
    const section = md.slice(md.indexOf('## Findings'), md.indexOf(headings[1]));
    const items = section.split('\n').filter((l) => /^\d+\. \*\*/.test(l));
    expect(items.length).toBe(expected.length);
    items.forEach((line, i) => {
      expect(line.startsWith(`${i + 1}. **`)).toBe(true);
      expect(line).toContain(`\`${expected[i].id}\``);
    });
    expect(section).toContain('[details](#gpu-idle-time-and-its-causes)');
    expect(section).toMatch(/thread 674 \(python3\) held the GIL/);
    expect(section).toMatch(/GC pauses: .* worst in iteration 107/);
  });

  it('HTML: findings as cards right after the iterations chart, linking to sections that exist', () => {
    const firstSections = [...html.matchAll(/<section id="([^"]+)">/g)].slice(0, 2).map((m) => m[1]);
    expect(firstSections).toEqual(['overview', 'findings']);
    const cards = [...html.matchAll(/<article class="finding sev-(\w+)" id="finding-([^"]+)">/g)];
    const expected = findFindings(data).findings;
    expect(cards.map((c) => c[2])).toEqual(expected.map((f) => f.id));
    expect(cards.map((c) => c[1])).toEqual(expected.map((f) => f.severity));
    const ids = new Set([...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1]));
    const links = [...html.matchAll(/class="finding-link" href="#([^"]+)"/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const l of links) expect(ids.has(l), l).toBe(true);
  });
});
