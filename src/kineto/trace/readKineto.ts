import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { KinetoJsonScanner, TraceScanError } from './jsonEventScanner.js';
import { KinetoTraceError } from '../../errors.js';

/** One element of `traceEvents`, as Kineto writes it (only the fields iterscope reads). */
export interface KinetoEvent {
  ph?: string;
  cat?: string;
  name?: string;
  pid?: number | string;
  tid?: number | string;
  ts?: number;
  dur?: number;
  id?: number;
  args?: Record<string, unknown>;
}

/** The top-level fields beside `traceEvents`. */
export interface KinetoHeader {
  schemaVersion: number | null;
  /** Add to `ts * 1000` for absolute (Unix epoch) ns; exceeds 2^53, so a bigint. 0n when absent. */
  baseTimeNs: bigint;
  hasBaseTime: boolean;
  /** `deviceProperties`, or PyTorch 1.8's `computeProperties` with its keys renamed to today's. */
  deviceProperties: Record<string, unknown>[];
  /** `distributedInfo` (`backend`, `rank`, `world_size`, ...) of a distributed run; null without. */
  distributedInfo: Record<string, unknown> | null;
  traceId: string | null;
  /** Other scalar top-level fields (cupti_version, cuda_driver_version, ...), as text. */
  extra: Map<string, string>;
}

/** Top-level keys kept (everything else is skipped without buffering). */
const HEADER_KEYS: ReadonlySet<string> = new Set([
  'schemaVersion',
  'baseTimeNanoseconds',
  'deviceProperties',
  'computeProperties',
  'distributedInfo',
  'trace_id',
  'cupti_version',
  'cuda_driver_version',
  'cuda_runtime_version',
  'hip_runtime_version',
  'rocprofiler-sdk_version',
  'displayTimeUnit',
]);

/** PyTorch 1.8's `computeProperties` keys that today's `deviceProperties` name otherwise (kineto tb_plugin test/gpu_metrics_input.json). */
const COMPUTE_PROPERTY_NAMES: Readonly<Record<string, string>> = { major: 'computeMajor', minor: 'computeMinor', multiProcessorCount: 'numSms' };

function renamedComputeProperties(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) out[COMPUTE_PROPERTY_NAMES[k] ?? k] = v;
  return out;
}

export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

function readHead(path: string, n: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const got = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

export interface ReadProgress {
  /** Bytes of the file read so far (compressed bytes for .gz) and its size. */
  (bytesRead: number, totalBytes: number): void;
}

/**
 * Streams a Kineto trace (`.json` or gzip, detected by magic bytes): calls `onEvent` for each
 * event in file order, with the header as far as it is known (Kineto writes most fields before
 * `traceEvents`; `distributedInfo` may follow it: the complete header is in the result). With
 * `wants` (`ScannerSink.wants`), events it rejects may go unparsed (`unparsed` counts them).
 * Never holds the whole file. Throws `KinetoTraceError` (one line naming the file) for truncated
 * or non-Kineto JSON.
 */
export async function readKinetoTrace(
  path: string,
  onEvent: (event: KinetoEvent, header: KinetoHeader) => void,
  opts: { onProgress?: ReadProgress; wants?: (text: string) => boolean } = {},
): Promise<{ header: KinetoHeader; events: number; unparsed: number }> {
  const total = statSync(path).size;
  const gz = isGzip(readHead(path, 2));
  const header: KinetoHeader = { schemaVersion: null, baseTimeNs: 0n, hasBaseTime: false, deviceProperties: [], distributedInfo: null, traceId: null, extra: new Map() };
  let bad: KinetoTraceError | null = null;
  const scanner = new KinetoJsonScanner(
    {
      topLevel(key, text) {
        setHeaderField(header, key, text);
      },
      event(value) {
        onEvent(value as KinetoEvent, header);
      },
      wants: opts.wants,
    },
    HEADER_KEYS,
  );
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  let bytesRead = 0;
  file.on('data', (chunk) => {
    bytesRead += chunk.length;
    opts.onProgress?.(bytesRead, total);
  });
  // zlib only for a gzip file (loading it costs a plain one start-up time).
  const text = gz ? file.pipe((await import('node:zlib')).createGunzip()) : file;
  text.setEncoding('utf8');
  try {
    for await (const chunk of text as AsyncIterable<string>) scanner.write(chunk);
    scanner.end();
  } catch (err) {
    file.destroy();
    if (err instanceof TraceScanError) bad = new KinetoTraceError(path, err.message);
    else if (err instanceof Error && (err as NodeJS.ErrnoException).code?.startsWith('Z_')) bad = new KinetoTraceError(path, `gzip data is damaged or truncated (${err.message})`);
    else throw err;
  }
  if (bad) throw bad;
  return { header, events: scanner.eventCount, unparsed: scanner.unparsedCount };
}

function setHeaderField(header: KinetoHeader, key: string, text: string): void {
  if (key === 'baseTimeNanoseconds') {
    // Beyond 2^53: read the digits, never through a double.
    if (/^\d+$/.test(text)) {
      header.baseTimeNs = BigInt(text);
      header.hasBaseTime = true;
    }
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return;
  }
  if (key === 'schemaVersion' && typeof value === 'number') header.schemaVersion = value;
  else if (key === 'deviceProperties' && Array.isArray(value)) header.deviceProperties = value.filter((d) => d && typeof d === 'object') as Record<string, unknown>[];
  else if (key === 'computeProperties' && Array.isArray(value) && header.deviceProperties.length === 0) {
    header.deviceProperties = (value.filter((d) => d && typeof d === 'object') as Record<string, unknown>[]).map(renamedComputeProperties);
  } else if (key === 'distributedInfo' && value !== null && typeof value === 'object' && !Array.isArray(value)) header.distributedInfo = value as Record<string, unknown>;
  else if (key === 'trace_id' && typeof value === 'string') header.traceId = value;
  else if (value !== null && typeof value !== 'object') header.extra.set(key, String(value));
}
