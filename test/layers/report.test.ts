import { describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { capturedFixture } from '../helpers/captured.js';

const trace = capturedFixture('layers-sglang', 'trace.sqlite');

/** `report --layers` (issue #56): the section per phase and layer, from the same analysis as `layers`; none without the option. */
describe.skipIf(!!trace.missing)('report --layers on layers-sglang', () => {
  it('adds "Layers inside the step" with the 8 layers of every phase, in Markdown and HTML; without --layers nothing changes', async () => {
    const md = await runReport(trace.path, { layers: true });
    const a = md.data.layers!;
    expect(a).toBeDefined();
    const section = md.text.slice(md.text.indexOf('## Layers inside the step'), md.text.indexOf('## GPU idle time'));
    // One row per phase and layer, 8 layers in each phase the steps ran.
    const lines = section.split('\n');
    const header = lines.findIndex((l) => l.startsWith('| Phase | Layer |'));
    const end = lines.indexOf('', header);
    const rows = lines.slice(header + 2, end);
    expect(rows.length).toBe(a.phases.length * 8);
    for (const p of a.phases) expect(p.layers.map((l) => l.layer)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const html = await runReport(trace.path, { layers: true, format: 'html' });
    expect(html.text).toContain('Layers inside the step');
    const plain = await runReport(trace.path, {});
    expect(plain.data.layers).toBeUndefined();
    expect(plain.text).not.toContain('Layers inside the step');
    expect(md.text.replace(section, '').replace(' · [Layers inside the step](#layers-inside-the-step)', '')).toBe(plain.text);
  });
});
