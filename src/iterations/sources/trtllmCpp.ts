import { CPP_ITERATION_RANGES } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';
import type { FoundIterationRanges } from '../source.js';

/** TensorRT-LLM's C++ runtime (`--nvtx` builds): unnumbered `forwardAsync` ranges, newest name first. */
export const trtllmCppSource: IterationSource = {
  id: 'trtllm-cpp',
  engine: 'tensorrt-llm',
  profileRangeSemantics: 'closed',
  findRanges(loaded) {
    let found: FoundIterationRanges | undefined;
    for (const name of CPP_ITERATION_RANGES) {
      found = collectRanges(loaded, this, (t) => t === name);
      if (found.byPid.size > 0) return found;
    }
    return found!;
  },
  parseLabel: () => null,
  matchesText: (t) => (CPP_ITERATION_RANGES as readonly string[]).includes(t),
};
