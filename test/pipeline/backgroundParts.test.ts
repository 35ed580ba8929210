/**
 * The NVTX worker computes the parts the registry marks `background` (backgroundParts.ts). A part
 * marked there and missing from the worker's table would not fail anything: the worker answers with
 * an error, and the calling thread computes the part itself (and every later one). So the two lists
 * are held equal here, and each part the worker computes is checked to come back from it.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { BACKGROUND_PARTS, computeInBackground } from '../../src/worker/backgroundParts.js';
import { PARTS } from '../../src/pipeline/parts.js';
import { REPORT_PARTS } from '../../src/pipeline/request.js';
import { fixture } from '../helpers/fixtures.js';

describe('the worker computes exactly the background parts', () => {
  it('every part marked background, and no other, is in the worker table', () => {
    const marked = PARTS.filter((p) => p.background).map((p) => p.name).sort();
    expect(Object.keys(BACKGROUND_PARTS).sort()).toEqual(marked);
    expect(marked).toEqual(['healthLaunches', 'hostCauseRows', 'hostRanges', 'info', 'iterationWindows', 'kernels', 'nvtx', 'nvtxGpu']);
  });

  it('a part it does not compute is an error (the calling thread then computes it)', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      expect(() => computeInBackground(new LoadedExport(h), 'gaps', {})).toThrow('no such background part: gaps');
      expect(() => computeInBackground(new LoadedExport(h), 'toString', {})).toThrow('no such background part: toString');
    });
  });

  it("pytorch-dense: with nvtxRead 'background' every background part of the report is taken from the worker", () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const taken: string[] = [];
      const proto = LoadedExport.prototype;
      const take = proto.takeBackground;
      proto.takeBackground = function <T>(this: LoadedExport, name: string): T | undefined {
        const v = take.call(this, name) as T | undefined;
        if (v !== undefined) taken.push(name);
        return v;
      };
      try {
        analyzeExport(h, { parts: REPORT_PARTS, nvtxRead: 'background' });
      } finally {
        proto.takeBackground = take;
      }
      expect(taken.sort()).toEqual(Object.keys(BACKGROUND_PARTS).sort());
    });
  });
});
