import type { Finding, FindingsResult, RankFindings } from '../src/findings/finding.js';
import { mdEscape } from './markdown.js';
import { tablesToCsv } from './csv.js';
import { toJson } from './json.js';
import type { DataTable, OutputFormat } from './table.js';
import { tablesToTerminal } from './terminal.js';
import { formatNs } from './units.js';

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);

/** Findings of one export, or across ranks: what each part of the output shows. */
export interface FindingGroup extends Pick<FindingsResult, 'file' | 'engine' | 'basis' | 'findings'> {
  /** `Findings: <file>` for one export; which rank's, or across ranks, with several. */
  title: string;
  /** Prefix of the findings' HTML ids (unique across the groups). */
  idPrefix: string;
}

const rankLabel = (r: RankFindings) => `${r.ranks.length === 1 ? 'rank' : 'ranks'} ${r.ranks.join(', ')}`;

/**
 * The findings in the order they are shown: one export's; or, with one export per rank, each
 * rank's own, then those across ranks (their evidence is in the `ranks` section).
 */
export function findingGroups(result: FindingsResult): FindingGroup[] {
  if (!result.ranks) return [{ ...result, title: `Findings: ${result.file}`, idPrefix: '' }];
  return [
    ...result.ranks.map((r) => ({ ...r, title: `Findings of ${rankLabel(r)}: ${r.file}`, idPrefix: `rank${r.ranks.join('-')}-` })),
    { ...result, title: `Findings across ranks (${result.ranks.length} exports)`, idPrefix: '', findings: result.findings.filter((f) => f.section === 'ranks') },
  ];
}

/** One row per finding (CSV carries raw ns and 0..1 shares; Markdown/terminal human units). */
export function findingsTable(result: Pick<FindingsResult, 'findings'>, title = 'Findings'): DataTable {
  return {
    title: `${title} (${result.findings.length}), ${result.findings.some((f) => f.health === 'blocking') ? 'what the capture cannot answer first, then ' : ''}ranked by recoverable time`,
    columns: [
      { key: 'rank', header: '#', kind: 'int' },
      { key: 'id', header: 'Id', kind: 'text' },
      { key: 'severity', header: 'Severity', kind: 'text' },
      { key: 'recoverableNs', header: 'Recoverable (ns)', kind: 'ns' },
      { key: 'recoverablePercent', header: 'Of wall (%)', kind: 'percent' },
      { key: 'restsOnNs', header: 'Rests on (ns)', kind: 'ns' },
      { key: 'confidence', header: 'Confidence', kind: 'text' },
      { key: 'title', header: 'Finding', kind: 'text' },
    ],
    rows: result.findings.map((f, i) => ({
      rank: i + 1,
      id: f.id,
      severity: f.severity,
      recoverableNs: f.recoverableNs,
      recoverablePercent: f.recoverableShare === null ? null : f.recoverableShare * 100,
      restsOnNs: f.restsOnNs,
      confidence: f.confidence.level,
      title: f.title,
    })),
  };
}

/** One line per piece of evidence, for CSV (raw ns). */
export function evidenceTable(result: Pick<FindingsResult, 'findings'>, title = 'Evidence'): DataTable {
  return {
    title,
    columns: [
      { key: 'id', header: 'Id', kind: 'text' },
      { key: 'iter', header: 'Iteration', kind: 'int' },
      { key: 'rank', header: 'Rank', kind: 'int' },
      { key: 'deviceId', header: 'Device', kind: 'int' },
      { key: 'tid', header: 'Thread', kind: 'int' },
      { key: 'startNs', header: 'Start (ns)', kind: 'ns' },
      { key: 'durationNs', header: 'Duration (ns)', kind: 'ns' },
      { key: 'valueNs', header: 'Counted (ns)', kind: 'ns' },
      { key: 'text', header: 'Evidence', kind: 'text' },
    ],
    rows: result.findings.flatMap((f) => f.evidence.map((e) => ({ id: f.id, ...e }))),
  };
}

function thresholdsLine(result: FindingsResult): string {
  return `thresholds: ${Object.entries(result.thresholds)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')} (override with --thresholds FILE.json)`;
}

function basisLine(result: Pick<FindingsResult, 'engine' | 'basis'>): string {
  const b = result.basis;
  const wall = b.wallSource === 'iterations' ? `${b.iterations} iterations, ${formatNs(b.wallNs)} of wall time` : b.wallSource === 'gpu-span' ? `no iterations; shares are of the GPU span, ${formatNs(b.wallNs)}` : 'no iterations and no GPU work';
  return `engine: ${result.engine}; basis: ${wall}`;
}

/** A finding as Markdown: title line, then evidence, estimate, remedy and confidence. */
export function findingMarkdown(f: Finding, n: number, sectionLink?: (section: string) => string | null): string {
  const link = sectionLink?.(f.section);
  const head = `${n}. **${mdEscape(f.title)}** — \`${f.id}\`, ${f.severity}; recoverable ${formatNs(f.recoverableNs)}${f.recoverableShare !== null ? ` (${pct(f.recoverableShare)} of the wall)` : ''}${link ? ` · [details](${link})` : ''}`;
  const lines = [head];
  for (const e of f.evidence) lines.push(`   - ${mdEscape(e.text)}`);
  lines.push(`   - *How estimated*: ${mdEscape(f.estimate)}`);
  lines.push(`   - *Remedy*: ${mdEscape(f.remedy)}`);
  const c = f.confidence;
  lines.push(`   - *Confidence*: ${c.level}${c.traced.length ? `; traced: ${mdEscape(c.traced.join('; '))}` : ''}${c.notTraced.length ? `; not traced: ${mdEscape(c.notTraced.join('; '))}` : ''}`);
  return lines.join('\n');
}

/** A group's findings as Markdown list items, or the line that says there are none. */
export function findingsMarkdownItems(findings: readonly Finding[], sectionLink?: (section: string) => string | null): string {
  if (findings.length === 0) return 'No finding passed its threshold.';
  return findings.map((f, i) => findingMarkdown(f, i + 1, sectionLink)).join('\n');
}

/** The findings as Markdown (top items first), with the basis and the thresholds in force. */
export function findingsToMarkdown(result: FindingsResult, opts: { headingLevel?: number; sectionLink?: (section: string) => string | null } = {}): string {
  const h = '#'.repeat(opts.headingLevel ?? 2);
  const out: string[] = [];
  for (const g of findingGroups(result)) {
    out.push(`${h} ${mdEscape(g.title)}`, '', mdEscape(basisLine(g)), '');
    if (g.findings.length === 0) out.push('No finding passed its threshold.', '');
    g.findings.forEach((f, i) => out.push(findingMarkdown(f, i + 1, opts.sectionLink), ''));
  }
  out.push(`> ${mdEscape(thresholdsLine(result))}`);
  return out.join('\n') + '\n';
}

/** The findings for a terminal: per group (with several exports, under its title) the ranked table, then each finding's evidence and remedy. */
export function findingsToTerminal(result: FindingsResult): string {
  const out: string[] = [];
  for (const g of findingGroups(result)) {
    if (result.ranks) out.push(g.title, '');
    out.push(basisLine(g), '', tablesToTerminal([findingsTable(g)]));
    g.findings.forEach((f, i) => {
      out.push(`${i + 1}. ${f.title} [${f.id}]`);
      for (const e of f.evidence) out.push(`   - ${e.text}`);
      out.push(`   how estimated: ${f.estimate}`, `   remedy: ${f.remedy}`, `   confidence: ${f.confidence.level}${f.confidence.notTraced.length ? ` (not traced: ${f.confidence.notTraced.join('; ')})` : ''}`, '');
    });
  }
  out.push(thresholdsLine(result));
  return out.join('\n') + '\n';
}

/** `iterscope findings` output in any format. JSON is the versioned result itself. */
export function renderFindings(format: OutputFormat, results: FindingsResult[]): string {
  switch (format) {
    case 'json':
      return toJson(results.length === 1 ? results[0] : results);
    case 'csv':
      return tablesToCsv(results.flatMap((r) => (r.ranks ? findingGroups(r).flatMap((g) => [findingsTable(g, g.title), evidenceTable(g, `Evidence, ${g.title}`)]) : [findingsTable(r), evidenceTable(r)])));
    case 'md':
      return results.map((r) => findingsToMarkdown(r)).join('\n');
    case 'table':
      return results.map(findingsToTerminal).join('\n');
  }
}
