import BetterSqlite3 from 'better-sqlite3';

/**
 * Builds a small export for edge cases from the REAL DDL of a fixture export: the `CREATE TABLE`
 * statements are copied from the fixture's sqlite_master (never a schema written by hand), then
 * the given rows are inserted. Columns not given take their NULL/default.
 */
export function buildMiniExport(path: string, fromFixture: string, tables: Record<string, Record<string, unknown>[]>, alsoCreate: string[] = []): void {
  const src = new BetterSqlite3(fromFixture, { readonly: true, fileMustExist: true });
  const db = new BetterSqlite3(path);
  try {
    // One transaction: the same tables and rows, without a journal sync per statement.
    db.transaction(() => {
      for (const name of new Set([...Object.keys(tables), ...alsoCreate])) {
        const row = src.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) as { sql: string } | undefined;
        if (!row) throw new Error(`${fromFixture} has no table ${name}`);
        db.exec(row.sql);
      }
      for (const [name, rows] of Object.entries(tables)) {
        for (const r of rows) {
          const cols = Object.keys(r);
          db.prepare(`INSERT INTO "${name}" (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...cols.map((c) => r[c] as never));
        }
      }
    })();
  } finally {
    src.close();
    db.close();
  }
}
