import { parseForwardStepLabel, PYTORCH_FORWARD_STEP } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';

/** TensorRT-LLM's PyTorch executor: `[Executor] _forward_step N: a ctx reqs, t ctx tokens, g gen reqs`. */
export const trtllmPytorchSource: IterationSource = {
  id: 'trtllm-pytorch',
  engine: 'tensorrt-llm',
  profileRangeSemantics: 'half-open',
  findRanges(loaded) {
    return collectRanges(loaded, this, (t) => PYTORCH_FORWARD_STEP.test(t));
  },
  matchesText: (t) => PYTORCH_FORWARD_STEP.test(t),
  parseLabel: parseForwardStepLabel,
};
