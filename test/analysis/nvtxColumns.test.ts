import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadNvtxColumns } from '../../src/load/nvtxEventColumns.js';
import { withExport } from '../../src/export/openExport.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The reference, in plain SQL: every usable row with its resolved text, in table order. */
function referenceRows(path: string) {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT n.start AS s, n."end" AS e, n.eventType AS et, (n.globalTid >> 24) % 16777216 AS pid,
                n.globalTid % 16777216 AS tid, coalesce(n.domainId, 0) AS dom,
                coalesce(si.value, n.text) AS txt
           FROM NVTX_EVENTS n LEFT JOIN StringIds si ON si.id = n.textId
          WHERE typeof(n.start) IN ('integer', 'real')
            AND (n."end" IS NULL OR (typeof(n."end") IN ('integer', 'real') AND n."end" >= n.start))
          ORDER BY n.rowid`,
      )
      .all() as { s: number; e: number | null; et: number; pid: number; tid: number; dom: number; txt: string | null }[];
    const total = (db.prepare('SELECT count(*) AS n FROM NVTX_EVENTS').get() as { n: number }).n;
    const marks = (db.prepare('SELECT count(*) AS n FROM NVTX_EVENTS WHERE eventType = 34').get() as { n: number }).n;
    const maxTs = (db.prepare(`SELECT coalesce(max(m), 0) AS m FROM (
        SELECT max(start) AS m FROM NVTX_EVENTS WHERE typeof(start) IN ('integer', 'real')
        UNION ALL SELECT max("end") FROM NVTX_EVENTS WHERE typeof("end") IN ('integer', 'real'))`).get() as { m: number }).m;
    return { rows, total, marks, maxTs };
  } finally {
    db.close();
  }
}

function expectColumnsEqualReference(path: string) {
  const ref = referenceRows(path);
  const c = withExport(path, loadNvtxColumns);
  expect(c.count).toBe(ref.rows.length);
  expect(c.invalidRows).toBe(ref.total - ref.rows.length);
  expect(c.marks).toBe(ref.marks);
  expect(c.maxTimestampNs).toBe(ref.maxTs);
  for (let i = 0; i < c.count; i++) {
    const r = ref.rows[i];
    const got = {
      s: c.start[i],
      e: Number.isNaN(c.end[i]) ? null : c.end[i],
      et: c.eventType[i],
      pid: c.pid[i],
      tid: c.tid[i],
      dom: c.domainId[i],
      txt: c.text[i] >= 0 ? c.texts[c.text[i]] : null,
    };
    if (JSON.stringify(got) !== JSON.stringify(r)) expect({ row: i, ...got }).toEqual({ row: i, ...r });
  }
  return c;
}

describe('loadNvtxColumns: one scan of NVTX_EVENTS equals the plain SQL reading', () => {
  it('pytorch-dense (TensorRT-LLM ranges, GC and GIL domains)', () => {
    const c = expectColumnsEqualReference(fixture('pytorch-dense', 'trace.sqlite'));
    expect(c.count).toBeGreaterThan(1000);
    // Every row names a text (registered or inline) or is a domain-less mark.
    expect(c.texts).toContain('Holding GIL');
  });

  it('nsys 2022.2 MPI export (inline texts, older schema)', () => {
    expectColumnsEqualReference(fixture('external', 'nsys2022.2_mpi_saxpy_pipit.sqlite'));
  });

  it('counts rows with unusable times instead of keeping them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-nvtxcols-'));
    const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(dir, 'bad.sqlite')), (db) => {
      db.exec(`UPDATE NVTX_EVENTS SET "end" = start - 1 WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE "end" IS NOT NULL LIMIT 3)`);
      db.exec(`UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE "end" IS NOT NULL ORDER BY rowid DESC LIMIT 2)`);
    });
    const c = expectColumnsEqualReference(path);
    expect(c.invalidRows).toBe(5);
  });
});
