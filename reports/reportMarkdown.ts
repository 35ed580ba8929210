import type { ReportBlock, ReportDocument } from './document/document.js';
import { mdEscape, tableToMarkdown } from './markdown.js';
import { findingGroups, findingsMarkdownItems } from './findingsReport.js';

/** Text outside tables: line breaks become spaces; `|` and `\` are escaped as in cells. */
function mdText(text: string): string {
  return mdEscape(text);
}

function blockToMarkdown(block: ReportBlock, sectionLink: (id: string) => string | null): string | null {
  switch (block.kind) {
    case 'table':
      return tableToMarkdown(block.table, 3).trimEnd();
    case 'paragraph':
      return mdText(block.text);
    case 'list':
      return block.items.length ? block.items.map((i) => `- ${mdText(i)}`).join('\n') : null;
    case 'findings': {
      const f = block.findings;
      if (!f.ranks) return findingsMarkdownItems(f.findings, sectionLink);
      // One export per rank: each rank's findings, then those across ranks, each under its title.
      return findingGroups(f)
        .map((g) => `**${mdText(g.title)}**\n\n${findingsMarkdownItems(g.findings, sectionLink)}`)
        .join('\n\n');
    }
    case 'chart':
    case 'overview':
    case 'timeline':
      // Charts are SVG and live in the HTML report (`--format html`); the tables carry their numbers.
      return null;
  }
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as `-`. */
export function githubSlug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * The report as one GitHub-flavoured Markdown document (a PR comment or job summary): a title,
 * a table of contents, then one `##` section per report section, tables written by
 * `tableToMarkdown` exactly as the single-analysis commands write them.
 */
export function reportToMarkdown(doc: ReportDocument): string {
  const out: string[] = [`# ${mdText(doc.title)}`, ''];
  out.push(doc.sections.map((s) => `[${mdText(s.title)}](#${githubSlug(s.title)})`).join(' · '), '');
  const titles = new Map(doc.sections.map((s) => [s.id, s.title]));
  const sectionLink = (id: string) => (titles.has(id) ? `#${githubSlug(titles.get(id)!)}` : null);
  for (const s of doc.sections) {
    out.push(`## ${mdText(s.title)}`, '');
    for (const b of s.blocks) {
      const text = blockToMarkdown(b, sectionLink);
      if (text) out.push(text, '');
    }
  }
  return out.join('\n').replace(/\n+$/, '\n');
}
