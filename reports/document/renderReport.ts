import { reportToMarkdown } from '../reportMarkdown.js';
import { reportToHtml } from '../html/reportHtml.js';
import { reportDocument } from './document.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import type { ReportAcrossRanks } from '../../src/ranks/ranksFromExports.js';
import type { ReportLayout } from './layout.js';

export type ReportFormat = 'md' | 'html';
export const REPORT_FORMATS: readonly ReportFormat[] = ['md', 'html'];

/** Version string written in the HTML footer. */
export const REPORT_GENERATOR = 'iterscope 0.1.0 report';

/**
 * The report as Markdown or as a self-contained HTML page (charts rendered to inline SVG).
 * Both come from the same `reportDocument`, so they hold the same sections and numbers.
 */
export async function renderReport(data: ReportAcrossRanks, format: ReportFormat, layout: Partial<ReportLayout> = {}): Promise<string> {
  // Markdown draws no charts (its writer skips them): their data is not made for it.
  const doc = reportDocument(data, { ...layout, charts: format === 'html' });
  return format === 'html' ? reportToHtml(doc, { generator: REPORT_GENERATOR }) : reportToMarkdown(doc);
}
