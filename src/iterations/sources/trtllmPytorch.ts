import { parseForwardStepLabel } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';

/**
 * The family: every `[Executor] _forward_step` range is an executor iteration, also in a form
 * the label regex does not know (its batch is then unknown, and one note quotes it).
 */
export const PYTORCH_FORWARD_STEP_FAMILY = /^\[Executor\] _forward_step\b/;

/** TensorRT-LLM's PyTorch executor: `[Executor] _forward_step N: a ctx reqs, t ctx tokens, g gen reqs`. */
export const trtllmPytorchSource: IterationSource = {
  id: 'trtllm-pytorch',
  engine: 'tensorrt-llm',
  profileRangeSemantics: 'half-open',
  labelsExpected: true,
  findRanges(loaded) {
    return collectRanges(loaded, this, (t) => PYTORCH_FORWARD_STEP_FAMILY.test(t));
  },
  matchesText: (t) => PYTORCH_FORWARD_STEP_FAMILY.test(t),
  parseLabel: parseForwardStepLabel,
};
