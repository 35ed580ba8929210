/** `findings` on the SGLang capture: SGLang's remedies, iterations named by their batch. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REMEDIES } from '../../src/findings/remedies.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const NSYS = fixture('sglang', 'trace.sqlite');
const LOG = fixture('sglang', 'sglang.log');

interface Finding {
  id: string;
  remedy: string;
  evidence: { text: string; iter?: number }[];
}

describe('findings on sglang/', () => {
  const r = runCli(['findings', NSYS, '--log', LOG, '--format', 'json']);
  const json = JSON.parse(r.stdout) as { engine: string; findings: Finding[] };

  it('names the engine and gives every finding its SGLang remedy', () => {
    expect([0, 1]).toContain(r.status);
    expect(json.engine).toBe('sglang');
    expect(json.findings.length).toBeGreaterThan(0);
    for (const f of json.findings) {
      // The coverage remedy is built from what this capture lacks (rules/coverage.ts, issue 28):
      // it adds only what was not traced (-t already had cuda,nvtx,osrt here).
      if (f.id === 'coverage') {
        expect(f.remedy).toMatch(/^Profile with `nsys profile -t cuda,nvtx,osrt,[^`]*python-gil[^`]*` \(adds python-gil/);
        continue;
      }
      expect(f.remedy, f.id).toBe(REMEDIES[f.id].sglang);
      expect(f.remedy).not.toBe(REMEDIES[f.id].unknown);
    }
    expect(Object.values(REMEDIES).every((rem) => rem.sglang.length > 0)).toBe(true);
  });

  it('phase outliers name each iteration by the batch of its log line', () => {
    const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');
    const outliers = json.findings.find((f) => f.id === 'phase-outliers');
    expect(outliers).toBeDefined();
    for (const e of outliers!.evidence) {
      const p = /Prefill batch, #new-seq: (\d+), #new-token: (\d+),/.exec(lines[e.iter!]);
      const d = /Decode batch, #running-req: (\d+),/.exec(lines[e.iter!]);
      const batch = p ? `context: ${p[1]} ctx (${p[2]} tok), 0 gen` : `generation: 0 ctx, ${d![1]} gen`;
      expect(e.text).toContain(`iteration ${e.iter} (${batch}, `);
    }
  });
});
