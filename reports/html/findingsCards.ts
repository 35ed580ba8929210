import type { Finding, FindingsResult } from '../../src/findings/finding.js';
import { findingGroups } from '../findingsReport.js';
import { formatNs } from '../units.js';
import { escapeHtml } from './htmlTable.js';

/**
 * The findings as cards, most recoverable time first: title, severity, recoverable time, the
 * evidence, the remedy, the confidence, and a link to the report section the evidence is in.
 */
export function findingsToHtml(result: FindingsResult, sections: ReadonlyMap<string, string>, timelineIters?: ReadonlySet<number>): string {
  if (!result.ranks) return findingCards(result.findings, sections, '', timelineIters);
  // One export per rank: each rank's findings, then those across ranks, each under its title.
  return findingGroups(result)
    .map((g) => `<h3 class="finding-group">${escapeHtml(g.title)}</h3>\n${findingCards(g.findings, sections, g.idPrefix)}`)
    .join('\n');
}

/**
 * The iterations a finding cites, each a link: to its step timeline when it has one (the page
 * script opens it), else to the overview chart. Empty without cited iterations, or without an
 * overview (`timelineIters` undefined: a page with no iterations chart).
 */
function citedIterationsHtml(f: Finding, timelineIters: ReadonlySet<number> | undefined): string {
  const iters = [...new Set(f.evidence.flatMap((e) => (e.iter === undefined ? [] : [e.iter])))];
  if (!timelineIters || iters.length === 0) return '';
  const links = iters.map((it) => (timelineIters.has(it) ? `<a href="#timeline" data-open-step="${it}">${it}</a>` : `<a href="#overview">${it}</a>`));
  return `\n<p class="finding-iters">Iterations cited: ${links.join(', ')}</p>`;
}

/** One group's cards; `idPrefix` keeps their ids unique across the groups. */
function findingCards(findings: readonly Finding[], sections: ReadonlyMap<string, string>, idPrefix: string, timelineIters?: ReadonlySet<number>): string {
  if (findings.length === 0) return '<p>No finding passed its threshold.</p>';
  const cards = findings.map((f, i) => {
    const share = f.recoverableShare === null ? '' : ` (${(f.recoverableShare * 100).toFixed(1)}% of the wall)`;
    const section = sections.get(f.section);
    const link = section ? `<a class="finding-link" href="#${escapeHtml(f.section)}">${escapeHtml(section)} →</a>` : '';
    const c = f.confidence;
    return `<article class="finding sev-${f.severity}" id="finding-${escapeHtml(idPrefix + f.id)}">
<h3><span class="finding-rank">${i + 1}.</span> ${escapeHtml(f.title)}</h3>
<p class="finding-meta"><code>${escapeHtml(f.id)}</code> · <span class="sev">${f.severity}</span> · recoverable <strong>${escapeHtml(formatNs(f.recoverableNs))}</strong>${escapeHtml(share)} ${link}</p>
<ul>
${f.evidence.map((e) => `<li>${escapeHtml(e.text)}</li>`).join('\n')}
</ul>${citedIterationsHtml(f, timelineIters)}
<p><strong>Remedy:</strong> ${escapeHtml(f.remedy)}</p>
<p class="note">How estimated: ${escapeHtml(f.estimate)}. Confidence: ${c.level}${c.traced.length ? `; traced: ${escapeHtml(c.traced.join('; '))}` : ''}${c.notTraced.length ? `; not traced: ${escapeHtml(c.notTraced.join('; '))}` : ''}.</p>
</article>`;
  });
  return `<div class="findings">\n${cards.join('\n')}\n</div>`;
}
