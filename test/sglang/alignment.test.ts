/**
 * The SGLang step/line alignment on small cases: real-shaped log lines (the fixtures' format),
 * steps as a capture shows them. Each case is one rule of sglangAlignment.ts that the fixtures do
 * not exercise on their own.
 */
import { describe, expect, it } from 'vitest';
import { parseIterationLogText } from '../../src/logs/index.js';
import { sglangLineOf } from '../../src/logs/sglangBatchLines.js';
import { alignSglangSteps, oneDecodeStepApart, type SglangLine, type SglangStep } from '../../src/iterations/sglangAlignment.js';
import { parseSglangStepSpan, stepSpanKind } from '../../src/iterations/sglangSteps.js';

const P = (seq: number, tok: number, n?: number) =>
  `[2026-11-25 14:51:36] Prefill batch${n === undefined ? '' : ` [${n}]`}, #new-seq: ${seq}, #new-token: ${tok}, #cached-token: 0, token usage: 0.10, #running-req: 15, #queue-req: 4, #pending-token: 0, cuda graph: False, input throughput (token/s): 100.00`;
const D = (running: number, tokens: number, n?: number) =>
  `[2026-11-25 14:51:36] Decode batch${n === undefined ? '' : ` [${n}]`}, #running-req: ${running}, #token: ${tokens}, token usage: 0.38, cuda graph: True, gen throughput (token/s): 4000.00, #queue-req: 4`;

function lines(...text: string[]): SglangLine[] {
  return parseIterationLogText(text.join('\n')).records.map((record) => ({ record, line: sglangLineOf(record)! }));
}

const decode: SglangStep = { kind: 'decode', label: null };
const prefill: SglangStep = { kind: 'prefill', label: null };
const span = (text: string): SglangStep => ({ kind: stepSpanKind(text), label: parseSglangStepSpan(text) });

describe('SGLang alignment rules', () => {
  it('consecutive decode lines are one step apart only if no request joined and each gained at most one token', () => {
    const [a, b, c, d] = lines(D(16, 6118), D(16, 6134), D(16, 6774), D(17, 6790)).map((l) => l.line);
    expect(oneDecodeStepApart(a, b)).toBe(true);
    expect(oneDecodeStepApart(b, c)).toBe(false);
    expect(oneDecodeStepApart(c, d)).toBe(false);
  });

  it('a log with a decode line every 40 steps is never read as a line per step', () => {
    // Three decode steps then a prefill fit lines 1..4 by kind, but the decode lines are 40 steps apart.
    const log = lines(P(1, 512), D(16, 1000), D(16, 1640), D(16, 2280), P(1, 256));
    const fit = alignSglangSteps([decode, decode, decode, prefill], log);
    expect(fit.mode).toBe('prefill-sequence');
    expect(fit.fits.every((f) => f.numbers === null)).toBe(true);
  });

  it('a line per step: the offset and the lines\' positions as numbers', () => {
    const log = lines(P(4, 1984), D(4, 2000), D(4, 2004), P(1, 96), D(5, 2105), D(5, 2110));
    const fit = alignSglangSteps([decode, prefill, decode], log);
    expect(fit).toEqual({ mode: 'every-step', fits: [{ mode: 'every-step', lineOf: [2, 3, 4], numbers: [2, 3, 4] }] });
  });

  it('forward numbers: a prefill step must have its line; an unlogged decode step need not', () => {
    const log = lines(P(1, 512, 10), D(16, 1000, 13), P(1, 256, 14), D(16, 1700, 53));
    // Steps 10..14: prefill, three decodes (one logged), prefill.
    const fit = alignSglangSteps([prefill, decode, decode, decode, prefill], log);
    expect(fit.fits).toEqual([{ mode: 'forward-numbers', lineOf: [0, -1, -1, 1, 2], numbers: [10, 11, 12, 13, 14] }]);
    // A prefill step where the log has no prefill line: no fit.
    expect(alignSglangSteps([prefill, decode, prefill, decode, prefill], log).fits).toEqual([]);
  });

  it('prefill sequence: compositions pick the place; a gap with as many decode lines as decode steps pins them', () => {
    const log = lines(P(1, 96), D(16, 10), P(1, 768), D(16, 20), P(1, 384), P(2, 192));
    const steps = [span('step[EXTEND bs=1 toks=768]'), span('step[DECODE bs=16]'), span('step[EXTEND bs=1 toks=384]')];
    expect(alignSglangSteps(steps, log).fits).toEqual([{ mode: 'prefill-sequence', lineOf: [2, 3, 4], numbers: null }]);
    // Two decode steps, one decode line between the prefills: the line is not pinned to either.
    const two = [span('step[EXTEND bs=1 toks=768]'), span('step[DECODE bs=16]'), span('step[DECODE bs=16]'), span('step[EXTEND bs=1 toks=384]')];
    expect(alignSglangSteps(two, log).fits).toEqual([{ mode: 'prefill-sequence', lineOf: [2, -1, -1, 4], numbers: null }]);
    // A decode line whose running requests no step in its gap had: no fit.
    const other = [span('step[EXTEND bs=1 toks=768]'), span('step[DECODE bs=15]'), span('step[DECODE bs=15]'), span('step[EXTEND bs=1 toks=384]')];
    expect(alignSglangSteps(other, log).fits).toEqual([]);
  });

  it('idle steps print no line; step spans of every form give their kind and counts', () => {
    expect(alignSglangSteps([span('step[IDLE bs=0]')], lines(D(1, 5))).fits).toEqual([]);
    expect(parseSglangStepSpan('step[prefill bs=2 toks=512]')).toMatchObject({ contextRequests: 2, contextTokens: 512, generationRequests: 0 });
    expect(parseSglangStepSpan('step[decode bs=8]')).toMatchObject({ contextRequests: 0, generationRequests: 8 });
    expect(parseSglangStepSpan('step[mixed bs=9 ext=300 dec=8]')).toMatchObject({ contextRequests: 1, contextTokens: null, generationRequests: 8 });
    expect(parseSglangStepSpan('step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]')).toMatchObject({ contextRequests: 1, contextTokens: 5, generationRequests: 1 });
    expect(parseSglangStepSpan('step[MIXED bs=17]')).toBeNull();
    expect(stepSpanKind('step[MIXED bs=17]')).toBe('mixed');
    expect(parseSglangStepSpan('step[idle]')).toMatchObject({ contextRequests: 0, generationRequests: 0 });
    // Speculative verify steps are their own phase, never decode (issue #54).
    expect(stepSpanKind('step[TARGET_VERIFY bs=8]')).toBe('speculative');
    expect(stepSpanKind('step[DRAFT_EXTEND bs=8]')).toBeNull();
  });
});
