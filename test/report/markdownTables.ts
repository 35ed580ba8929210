/** Reading tables back out of Markdown documents (tests only). */

/**
 * The lines of the first table under a `###` heading that starts with `titlePrefix`: header,
 * separator, then rows. Throws when there is no such heading, so a renamed table fails loudly.
 */
export function mdTableLines(md: string, titlePrefix: string): string[] {
  const lines = md.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`### ${titlePrefix}`));
  if (at < 0) throw new Error(`no table titled '${titlePrefix}...'`);
  let i = at + 1;
  while (i < lines.length && !lines[i].startsWith('|')) i++;
  const out: string[] = [];
  while (i < lines.length && lines[i].startsWith('|')) out.push(lines[i++]);
  return out;
}

/** The cells of one Markdown table line (`\|` inside a cell is not a separator). */
export function mdCells(line: string): string[] {
  const cells: string[] = [];
  let cur = '';
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && i + 1 < body.length) {
      cur += body[++i];
      continue;
    }
    if (c === '|') {
      cells.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

/** A table as objects keyed by header text. */
export function mdTable(md: string, titlePrefix: string): Record<string, string>[] {
  const [head, , ...rows] = mdTableLines(md, titlePrefix);
  const headers = mdCells(head);
  return rows.map((r) => Object.fromEntries(mdCells(r).map((c, i) => [headers[i], c])));
}

/** The value of a Field / Value row of the first table under `## sectionTitle`. */
export function mdFact(md: string, sectionTitle: string, field: string): string | undefined {
  const start = md.indexOf(`## ${sectionTitle}`);
  if (start < 0) throw new Error(`no section '${sectionTitle}'`);
  const next = md.indexOf('\n## ', start + 3);
  const section = md.slice(start, next < 0 ? undefined : next);
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) continue;
    const [f, v] = mdCells(line);
    if (f === field) return v;
  }
  return undefined;
}
