/**
 * The NVTX worker thread's entry (see src/worker/nvtxInBackground.ts): the loader reads the NVTX
 * columns there; this computes the parts the pipeline gave it from them (backgroundParts.ts).
 */
import { runNvtxWorker } from './nvtxWorker.js';
import { computeInBackground } from './backgroundParts.js';

// Not a top-level await: the bundled worker is a CommonJS script (scripts/bundle.mjs, for V8's
// code cache); `runNvtxWorker` answers every error on its port.
void runNvtxWorker(computeInBackground);
