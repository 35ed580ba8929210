import { readFileSync } from 'node:fs';

/**
 * A small RFC 4180 CSV parser for tests (oracle files from `nsys stats --format csv`, our own CSV
 * output). Fields may be quoted; inside quotes `""` is a quote and commas, CR and LF are data.
 * Records end at LF or CRLF; a final line break does not start an empty record. Throws on a quote
 * inside an unquoted field or an unterminated quoted field, so malformed output fails loudly.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  const n = text.length;
  // True once the current record has started (so "" at end of input is not a record).
  let inRecord = false;
  while (i < n) {
    const c = text[i];
    if (c === '"' && field === '') {
      // Quoted field: must start right after a separator or at the start of a record.
      i++;
      for (;;) {
        if (i >= n) throw new Error(`CSV: unterminated quoted field in record ${records.length + 1}`);
        const q = text[i];
        if (q === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += q;
        i++;
      }
      inRecord = true;
      const next = text[i];
      if (i < n && next !== ',' && next !== '\n' && next !== '\r') {
        throw new Error(`CSV: data after closing quote in record ${records.length + 1}`);
      }
      continue;
    }
    if (c === ',') {
      record.push(field);
      field = '';
      inRecord = true;
      i++;
      continue;
    }
    if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      inRecord = false;
      i += c === '\r' ? 2 : 1;
      continue;
    }
    if (c === '"') throw new Error(`CSV: quote inside an unquoted field in record ${records.length + 1}`);
    field += c;
    inRecord = true;
    i++;
  }
  if (inRecord) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/** A CSV with a header row as objects keyed by header. Duplicate headers are an error. */
export function parseCsvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...body] = parseCsv(text);
  if (new Set(header).size !== header.length) throw new Error(`CSV: duplicate header in ${header.join(',')}`);
  const rows = body.map((r, k) => {
    if (r.length !== header.length) throw new Error(`CSV: record ${k + 2} has ${r.length} fields, header has ${header.length}`);
    return Object.fromEntries(header.map((h, j) => [h, r[j]]));
  });
  return { header, rows };
}

export function readCsv(path: string): string[][] {
  return parseCsv(readFileSync(path, 'utf8'));
}

export function readCsvObjects(path: string): { header: string[]; rows: Record<string, string>[] } {
  return parseCsvObjects(readFileSync(path, 'utf8'));
}
