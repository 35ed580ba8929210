/** Property tests: detection and per-line parsing never throw, whatever the input. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectLineFormat, parseIterationLogLine, parseIterationLogText } from '../../src/logs/index.js';
import { locateRecord } from '../../src/logs/detect.js';
import { fixtureLines } from './fixtures.js';

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
/** Characters that steer the detector and parsers into their interesting branches. */
const logAlphabet = fc.constantFrom(
  ...`{}[](),:'" =\\0123456789.-_\n`.split(''),
  'iter = ',
  'global_rank',
  'states = ',
  '"iter"',
  "'iter': ",
  '"Iteration Counter":',
  'N/A',
  'ms',
  'None',
  '[TensorRT-LLM][INFO] ',
  '\uFFFD',
);
const anyLine = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: codeUnit, maxLength: 300 }),
  fc.string({ unit: logAlphabet, maxLength: 80 }),
);

/** Real record lines of each format, to mutate. */
const realLines = [
  ...fixtureLines('pytorch-dense/iteration_log.txt').slice(0, 3),
  ...fixtureLines('pytorch-dense/executor.log').slice(0, 3),
  ...fixtureLines('cpp-legacy-windows/executor.log').slice(0, 3),
];

/** A real line cut at some point and/or with a random string spliced in. */
const mutatedLine = fc
  .tuple(fc.constantFrom(...realLines), fc.nat(), fc.nat(), fc.string({ unit: logAlphabet, maxLength: 5 }))
  .map(([line, a, b, insert]) => {
    const cut = a % (line.length + 1);
    const at = b % (cut + 1);
    return line.slice(0, at) + insert + line.slice(at, cut);
  });

/**
 * The formats of the payloads the parser may read on a line: the first one located (what
 * `detectLineFormat` says), then, when a payload does not parse, those located past a later brace
 * (parse.ts retries there: a prefix's own `{...}`, or a record cut short with a whole one after it).
 */
function payloadFormats(line: string): Set<string | null> {
  const formats = new Set<string | null>([detectLineFormat(line)]);
  for (let b = line.indexOf('{', 1); b >= 0; b = line.indexOf('{', b + 1)) formats.add(locateRecord(line, b)?.format ?? null);
  return formats;
}

function checkLine(line: string): void {
  const format = detectLineFormat(line);
  const result = parseIterationLogLine(line, 1, 'prop.log');
  if (result.kind === 'records') {
    expect(format).not.toBeNull();
    for (const r of result.records) {
      expect(Number.isInteger(r.iter) && r.iter >= 0).toBe(true);
      if (format !== 'legacy-json') expect(payloadFormats(line)).toContain(r.format);
    }
  } else if (result.kind === 'skipped') {
    expect(result.reason.length).toBeGreaterThan(0);
  } else {
    expect(line.trim()).toBe('');
  }
}

describe('a record cut short with a whole one after it', () => {
  // Found by the spliced-lines property (seed 1480274866): a pyrepr record cut after its key, then
  // a whole TensorRT-LLM JSON line (two writers' lines run together). The pyrepr payload does not
  // parse, so the parser reads the JSON record after it, as it reads past a prefix's own braces.
  it('reads the whole record and says its own format, though the line is detected by the first', () => {
    const legacy = realLines.find((l) => l.includes('"Iteration Counter"'))!;
    const line = `{'iter': ${legacy}`;
    expect(detectLineFormat(line)).toBe('iteration-stats-pyrepr');
    const result = parseIterationLogLine(line, 1, 'spliced.log');
    const alone = parseIterationLogLine(legacy, 1, 'spliced.log');
    expect(result.kind).toBe('records');
    if (result.kind !== 'records' || alone.kind !== 'records') return;
    expect(result.records.map((r) => [r.format, r.iter])).toEqual(alone.records.map((r) => ['legacy-json', r.iter]));
    checkLine(line);
  });
});

describe('never throws on arbitrary input', () => {
  it('detectLineFormat and parseIterationLogLine on arbitrary strings', () => {
    fc.assert(fc.property(anyLine, (line) => checkLine(line)), { numRuns: 3000 });
  });

  it('on truncated and spliced real record lines', () => {
    fc.assert(fc.property(mutatedLine, (line) => checkLine(line)), { numRuns: 3000 });
  });

  it('a truncated pyrepr or JSON record is skipped, never half-read', () => {
    const cutRecord = fc
      .tuple(fc.constantFrom(...realLines.filter((l) => l.includes('{'))), fc.nat())
      .map(([line, n]) => line.trimEnd().slice(0, 1 + (n % (line.trimEnd().length - 1))));
    fc.assert(
      fc.property(cutRecord, (line) => {
        expect(parseIterationLogLine(line).kind).not.toBe('records');
      }),
      { numRuns: 2000 },
    );
  });

  it('parseIterationLogText accounts for every line', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(anyLine, mutatedLine), { maxLength: 20 }), (lines) => {
        const text = lines.join('\n');
        const log = parseIterationLogText(text);
        expect(log.skippedLines).toBeLessThanOrEqual(log.linesRead);
        expect(log.skippedSamples.length).toBeLessThanOrEqual(Math.min(20, log.skippedLines));
        const counted = Object.values(log.formats).reduce((a, b) => a + (b ?? 0), 0);
        expect(counted).toBe(log.records.length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('text log fields survive generation (property)', () => {
  it('a v2/v3 line built from the format strings reads back its numbers', () => {
    fc.assert(
      fc.property(
        fc.record({
          k: fc.integer({ min: 1, max: 1e9 }),
          ctx: fc.nat(64),
          gen: fc.nat(256),
          tokens: fc.nat(1e6),
          host: fc.integer({ min: 0, max: 1e7 }).map((x) => x / 1000),
          prev: fc.option(fc.integer({ min: 0, max: 1e7 }).map((x) => x / 1000)),
          v3: fc.boolean(),
          prefix: fc.constantFrom('', '0: ', '[11/20/2026-23:07:42] [TRT-LLM] [I] ', '[TRT-LLM] [I] [_torch][RANK 0] '),
        }),
        ({ k, ctx, gen, tokens, host, prev, v3, prefix }) => {
          const sched = ctx + gen;
          const prevText = prev === null ? 'N/A' : `${prev}ms`;
          const states = `{'num_ctx_requests': ${ctx}, 'num_ctx_tokens': ${tokens}, 'num_generation_tokens': ${gen}}`;
          const line = v3
            ? `${prefix}iter = ${k}, global_rank = 0, rank = 0, num_scheduled_requests = ${sched}, kv_cache_util = N/A, currank_total_requests = 0/1, host_step_time = ${host}ms, prev_device_step_time = ${prevText}, timestamp = 2026-01-01 00:00:00, states = ${states}`
            : `${prefix}iter = ${k}, global_rank = 0, rank = 0, currank_total_requests = 0/1, host_step_time = ${host}ms, prev_device_step_time = ${prev ?? 'N/A'}ms, timestamp = 2026-01-01 00:00:00, num_scheduled_requests: ${sched}, states = ${states}`;
          const result = parseIterationLogLine(line);
          if (result.kind !== 'records') throw new Error(`not parsed: ${line}`);
          expect(result.records[0]).toMatchObject({
            iter: k - 1,
            scheduledRequests: sched,
            contextRequests: ctx,
            contextTokens: tokens,
            generationRequests: gen,
            generationTokens: gen,
            hostStepTimeMs: host,
            prevDeviceStepTimeMs: prev,
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
