import { selectNvtxMaxTimestamp } from '../../queries/nvtxEvents.js';
import { selectNvtxDomainCreates } from '../../queries/nvtxDomains.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import type { LoadedExport } from './loadedExport.js';
import type { NvtxColumns } from './nvtxEventColumns.js';
import { domainKey } from './domainKeys.js';

/** Where `nvtxDomains` keeps the names on the export's view. */
const NVTX_DOMAINS = 'nvtxDomains';

/**
 * Names of NVTX domains per (domainId, pid): the text of each DomainCreate (eventType 75) row.
 * Domains whose creation row is missing (trimmed exports) have no entry. Read once per export
 * (a second of the 10x bench file by query), from the NVTX columns when they are read, or by
 * another scan of the whole table (`knownNvtxDomains`: `info`'s), else by query.
 */
export function nvtxDomains(loaded: LoadedExport): ReadonlyMap<number, string> {
  loaded.requireContract('nvtx');
  return loaded.cached(NVTX_DOMAINS, () => {
    const cols = loaded.sharedNvtx();
    return cols ? nvtxDomainsOf(cols) : readNvtxDomains(loaded);
  });
}

/** The domains' names as a scan of the whole table found them (`DomainCreates`): what `nvtxDomains` gives from now on, unless it was read before. */
export function knownNvtxDomains(loaded: LoadedExport, names: ReadonlyMap<number, string>): void {
  loaded.cached(NVTX_DOMAINS, () => names);
}

/** `nvtxDomains` from the NVTX columns: the earliest DomainCreate row of each (domain, process). */
export function nvtxDomainsOf(c: NvtxColumns): Map<number, string> {
  const first = new Map<number, number>();
  for (let i = 0; i < c.count; i++) {
    if (c.eventType[i] !== 75) continue;
    const key = domainKey(c.domainId[i], c.pid[i]);
    const prev = first.get(key);
    if (prev === undefined || c.start[i] < c.start[prev]) first.set(key, i);
  }
  const out = new Map<number, string>();
  for (const [key, i] of first) if (c.text[i] >= 0) out.set(key, c.texts[c.text[i]]);
  return out;
}

function readNvtxDomains(loaded: LoadedExport): Map<number, string> {
  const handle = loaded.handle;
  if (!handle.hasTable('NVTX_EVENTS')) return new Map();
  const creates = new DomainCreates();
  forEachRow(handle, selectNvtxDomainCreates(handle), (domainId: number | null, pid: number, start: number, textId: number | null, text: string | null) =>
    creates.add(domainKey(domainId, pid), start, textId, text),
  );
  return creates.names(loaded);
}

/**
 * The earliest DomainCreate row of each (domain, process), which names it: rows are compared by
 * start rather than by the order a query gives them (forEachRow wraps it in a subquery).
 */
export class DomainCreates {
  private readonly first = new Map<number, { start: number; textId: number | null; text: string | null }>();

  add(key: number, start: number, textId: number | null, text: string | null): void {
    const prev = this.first.get(key);
    if (!prev || start < prev.start) this.first.set(key, { start, textId, text });
  }

  /** Each domain's name, as nsys reads it: coalesce(StringIds.value via textId, text). */
  names(loaded: LoadedExport): Map<number, string> {
    const strings = loadStrings(loaded.handle, [...this.first.values()].flatMap((d) => (d.textId == null ? [] : [d.textId])));
    const out = new Map<number, string>();
    for (const [key, d] of this.first) {
      const name = (d.textId != null ? strings.get(d.textId) : undefined) ?? d.text;
      if (name != null) out.set(key, name);
    }
    return out;
  }
}

/** The latest NVTX timestamp (where nsys ends unclosed ranges), or null without NVTX. */
export function nvtxEndOfTime(loaded: LoadedExport): number | null {
  if (!loaded.hasTable('NVTX_EVENTS')) return null;
  const cols = loaded.sharedNvtx();
  if (cols) return cols.maxTimestampNs;
  return loaded.cached('nvtxEndOfTime', () => allRows(loaded.handle, selectNvtxMaxTimestamp(loaded.handle))[0]?.maxTs ?? null);
}
