#!/usr/bin/env node
/**
 * Builds a large synthetic PyTorch profiler (Kineto) trace from a real one, to check that reading
 * it stays in bounded memory (the converter streams: peak RSS must stay under 500 MB for 200 MB):
 * the source's header as is, then its events repeated until the file reaches the target size,
 * copy c shifted as if the run had gone on:
 * - `ts` + c * SPAN (whole microseconds: the decimals Kineto wrote stay as they are);
 * - `args.correlation` + c * CORR, `args["External id"]` + c * EXT, flow `id` + c * CORR (kernel <->
 *   launch joins stay 1:1);
 * - metadata (`ph: "M"`) and the profiler's own span/instants written once.
 * Written with a stream, one event at a time; `--gzip` writes `.json.gz`.
 *
 *   node bench/make-kineto-200mb.mjs [--source trace.json] [--mb 200] [--out FILE] [--gzip]
 *
 * Then, once: /usr/bin/time -v node dist/src/cli/main.js kernels FILE --format csv > /dev/null
 */
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { optionsOrExit } from './args.mjs';
import { createGzip } from 'node:zlib';
import { once } from 'node:events';

const here = dirname(fileURLToPath(import.meta.url));
const values = optionsOrExit(
  'make-kineto-200mb',
  {
    source: { type: 'string', default: resolve(here, '..', '..', 'shared', 'fixtures', 'pytorch-torch-only', 'trace.json') },
    mb: { type: 'string', default: '200' },
    out: { type: 'string' },
    gzip: { type: 'boolean', default: false },
  },
  'usage: node bench/make-kineto-200mb.mjs [--source TRACE.json] [--mb N] [--out FILE] [--gzip]\n',
);
const targetBytes = Number(values.mb) * 1024 * 1024;
const out = values.out ?? join(tmpdir(), `iterscope-kineto-${values.mb}mb.json${values.gzip ? '.gz' : ''}`);
const started = Date.now();

// The source is a fixture of a few MB: parsing it whole here is fine (the reader under test never does).
const text = readFileSync(values.source, 'utf8');
const doc = JSON.parse(text);
const base = /"baseTimeNanoseconds":\s*(\d+)/.exec(text)[1]; // beyond 2^53: copied as digits
const events = doc.traceEvents;
const timed = events.filter((e) => typeof e.ts === 'number' && typeof e.pid === 'number');
const t0 = Math.min(...timed.map((e) => e.ts));
const t1 = Math.max(...timed.map((e) => e.ts + (e.dur ?? 0)));
const SPAN = Math.ceil(t1 - t0) + 1000;
let maxCorr = 0;
let maxExt = 0;
for (const e of events) {
  if (typeof e.args?.correlation === 'number') maxCorr = Math.max(maxCorr, e.args.correlation);
  if (typeof e.id === 'number') maxCorr = Math.max(maxCorr, e.id);
  if (typeof e.args?.['External id'] === 'number') maxExt = Math.max(maxExt, e.args['External id']);
}
const CORR = maxCorr + 1;
const EXT = maxExt + 1;
const once_ = events.filter((e) => e.ph === 'M' || typeof e.pid !== 'number');
const repeated = events.filter((e) => !(e.ph === 'M' || typeof e.pid !== 'number'));

const file = createWriteStream(out);
const sink = values.gzip ? createGzip() : file;
if (values.gzip) sink.pipe(file);
let written = 0;
async function write(s) {
  written += Buffer.byteLength(s);
  if (!sink.write(s)) await once(sink, 'drain');
}

const header = { ...doc };
delete header.traceEvents;
delete header.baseTimeNanoseconds;
delete header.traceName;
await write(`{\n${Object.entries(header).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`).join('\n')}\n  "baseTimeNanoseconds": ${base},\n  "traceEvents": [\n`);
let first = true;
let count = 0;
const emit = async (e) => {
  await write(`${first ? '' : ',\n'}  ${JSON.stringify(e)}`);
  first = false;
  count++;
};
for (const e of once_) await emit(e);
let copies = 0;
while (written < targetBytes) {
  const c = copies++;
  for (const e of repeated) {
    if (c === 0) {
      await emit(e);
      continue;
    }
    const x = { ...e, ts: e.ts + c * SPAN };
    if (typeof e.id === 'number') x.id = e.id + c * CORR;
    if (e.args) {
      x.args = { ...e.args };
      if (typeof e.args.correlation === 'number') x.args.correlation = e.args.correlation + c * CORR;
      if (typeof e.args['External id'] === 'number') x.args['External id'] = e.args['External id'] + c * EXT;
    }
    await emit(x);
  }
}
await write(`\n  ],\n  "traceName": ${JSON.stringify(out)}\n}\n`);
sink.end();
await once(file, 'finish');
console.log(`${out}: ${copies} copies, ${count} events, ${(written / 1024 / 1024).toFixed(1)} MB of JSON, ${(statSync(out).size / 1024 / 1024).toFixed(1)} MB on disk, ${((Date.now() - started) / 1000).toFixed(1)} s`);
