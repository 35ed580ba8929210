import { chmodSync, copyFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/**
 * Damaged copies of a fixture export, made the way a user with the sqlite3 shell would: the
 * table's REAL DDL (from the copy's sqlite_master) is edited (a column dropped, renamed or
 * retyped, NOT NULL removed) and the rows copied across, or rows are updated in place. Never the
 * fixture itself: `copyExport` first.
 */
export function copyExport(fixturePath: string, to: string): string {
  copyFileSync(fixturePath, to);
  chmodSync(to, 0o644);
  return to;
}

/** The column definitions of `table`'s CREATE TABLE statement, one per column, as written. */
function columnDefinitions(ddl: string): { head: string; defs: string[] } {
  const open = ddl.indexOf('(');
  const body = ddl.slice(open + 1, ddl.lastIndexOf(')'));
  // Comments (`-- ...`) hold commas and parentheses: drop them before splitting.
  const clean = body.replace(/--[^\n]*/g, '');
  const defs: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of clean) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      defs.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) defs.push(cur.trim());
  return { head: ddl.slice(0, open), defs };
}

const nameOf = (def: string) => def.split(/\s+/)[0].replace(/^["`[]|["`\]]$/g, '');

/**
 * Rebuilds `table` from its DDL with `edit` applied to the column definitions (return null to
 * drop a column), copying the rows of the kept columns. `value` rewrites a column's values on the
 * way (SQL over the old row), e.g. `CAST(correlationId AS TEXT)`.
 */
export function rebuildTable(db: BetterSqlite3.Database, table: string, edit: (def: string, name: string) => string | null, value: Record<string, string> = {}): void {
  const row = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) as { sql: string } | undefined;
  if (!row) throw new Error(`no table ${table}`);
  const { defs } = columnDefinitions(row.sql);
  const kept: { from: string; def: string; name: string }[] = [];
  for (const d of defs) {
    const name = nameOf(d);
    const e = edit(d, name);
    if (e !== null) kept.push({ from: name, def: e, name: nameOf(e) });
  }
  const tmp = `${table}__rebuilt`;
  db.exec(`CREATE TABLE "${tmp}" (${kept.map((k) => k.def).join(', ')})`);
  db.exec(`INSERT INTO "${tmp}" (${kept.map((k) => `"${k.name}"`).join(', ')}) SELECT ${kept.map((k) => value[k.from] ?? `"${k.from}"`).join(', ')} FROM "${table}"`);
  db.exec(`DROP TABLE "${table}"`);
  db.exec(`ALTER TABLE "${tmp}" RENAME TO "${table}"`);
}

export function dropColumn(db: BetterSqlite3.Database, table: string, column: string): void {
  rebuildTable(db, table, (d, n) => (n === column ? null : d));
}

export function renameColumn(db: BetterSqlite3.Database, table: string, column: string, to: string): void {
  db.exec(`ALTER TABLE "${table}" RENAME COLUMN "${column}" TO "${to}"`);
}

/** Declares `column` with another type and no constraints, optionally rewriting its values. */
export function retypeColumn(db: BetterSqlite3.Database, table: string, column: string, type: string, value?: string): void {
  rebuildTable(db, table, (d, n) => (n === column ? `"${column}" ${type}` : d), value ? { [column]: value } : {});
}

/** Opens a copy for editing, runs `edit`, closes. */
export function editExport(path: string, edit: (db: BetterSqlite3.Database) => void): string {
  const db = new BetterSqlite3(path);
  try {
    edit(db);
  } finally {
    db.close();
  }
  return path;
}
