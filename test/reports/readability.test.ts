import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { summarizeKernels, type KernelSummary } from '../../src/analysis/kernelSummary.js';
import { iterationsTable } from '../../reports/iterationsReport.js';
import { kernelSummaryTable } from '../../reports/kernelsReport.js';
import { tableToMarkdown } from '../../reports/markdown.js';
import { tableToCsv } from '../../reports/csv.js';
import { tableToHtml } from '../../reports/html/htmlTable.js';
import { collapseColumnGroups, GROUP_COLUMNS_SHOWN } from '../../reports/collapseColumns.js';
import { shortKernelName } from '../../reports/kernelName.js';
import { runReport } from '../../src/cli/commands/report.js';
import { fixture } from '../helpers/fixtures.js';
import { mdCells } from '../report/markdownTables.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

describe('report readability', () => {
  let analysis: IterationAnalysis;
  let kernels: KernelSummary;
  beforeAll(() => {
    [analysis, kernels] = withExport(fixture('pytorch-moe-window', 'trace.sqlite'), (h) => [analyzeIterations(new LoadedExport(h)), summarizeKernels(new LoadedExport(h))] as const);
  });

  it('headers match cells: human units under unit-free headers, raw ns under "(ns)" in CSV', () => {
    const t = iterationsTable(analysis);
    const md = tableToMarkdown(t);
    const header = mdCells(md.split('\n').find((l) => l.startsWith('| Iter'))!);
    expect(header).toContain('Wall');
    expect(header.some((h) => h.endsWith('(ns)'))).toBe(false);
    const csvHeader = tableToCsv(t).split('\n')[0].split(',');
    expect(csvHeader).toContain('Wall (ns)');
    expect(tableToCsv(t).split('\n')[1].split(',')[csvHeader.indexOf('Wall (ns)')]).toBe(String(analysis.iterations[0].wallNs));
  });

  it('per-iteration tables show the top categories plus "other" in Markdown; CSV keeps every category', () => {
    const t = iterationsTable(analysis);
    const cats = t.columns.filter((c) => c.group === 'categories');
    expect(cats.length).toBeGreaterThan(GROUP_COLUMNS_SHOWN + 1);
    const narrow = collapseColumnGroups(t);
    const kept = narrow.columns.filter((c) => c.group === 'categories');
    expect(kept.length).toBe(GROUP_COLUMNS_SHOWN);
    // The kept ones are the largest by total over the iterations.
    const total = (key: string) => analysis.iterations.reduce((a, r) => a + (r.categoryNs[key.slice(4)] ?? 0), 0);
    const keptMin = Math.min(...kept.map((c) => total(c.key)));
    const dropped = cats.filter((c) => !kept.includes(c));
    for (const d of dropped) expect(total(d.key)).toBeLessThanOrEqual(keptMin);
    const other = narrow.columns.find((c) => c.key === 'other:categories')!;
    expect(other.header).toBe(`other categories (${dropped.length})`);
    analysis.iterations.forEach((r, i) => expect(narrow.rows[i]['other:categories']).toBe(dropped.reduce((a, d) => a + (r.categoryNs[d.key.slice(4)] ?? 0), 0)));
    // Markdown shows the narrow table; CSV all of them.
    const mdHeader = mdCells(tableToMarkdown(t).split('\n').find((l) => l.startsWith('| Iter'))!);
    expect(mdHeader).toContain(`other categories (${dropped.length})`);
    expect(mdHeader.length).toBe(t.columns.length - dropped.length + 1);
    expect(tableToCsv(t).split('\n')[0].split(',').length).toBe(t.columns.length);
  });

  it('templated kernel names are shortened in Markdown and HTML (full name on hover), whole in CSV', () => {
    expect(shortKernelName('void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)')).toBe(
      'at::native::vectorized_elementwise_kernel<…>',
    );
    expect(shortKernelName('void at::native::(anonymous namespace)::cunn_SoftMaxForward<(int)8, float>(T2 *, const T1 *, int)')).toBe('at::native::(anonymous namespace)::cunn_SoftMaxForward<…>');
    expect(shortKernelName('ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)')).toBe('ncclDevKernel_AllReduce_Sum_bf16_RING_LL');
    expect(shortKernelName('nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT')).toBe('nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT');
    const t = kernelSummaryTable(kernels);
    const templated = kernels.rows.find((k) => k.name.includes('<'))!;
    const md = tableToMarkdown(t);
    expect(md).not.toContain(templated.name.replace(/</g, '\\<'));
    expect(tableToCsv(t)).toContain(templated.name.includes(',') ? `"${templated.name.replace(/"/g, '""')}"` : templated.name);
    const html = tableToHtml(t);
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    expect(html).toContain(`title="${esc(templated.name)}">${esc(shortKernelName(templated.name))}</td>`);
  });

  it('"Devices with GPU work" names the device', async () => {
    const { text } = await runReport(fixture('pytorch-moe-window', 'trace.sqlite'));
    expect(text).toContain('| Devices with GPU work | device 0 |');
  });
});
