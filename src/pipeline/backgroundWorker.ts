/**
 * The NVTX worker thread's entry (see src/load/nvtxInBackground.ts): the loader reads the NVTX
 * columns there; this computes the parts the pipeline gave it from them (backgroundParts.ts).
 */
import { runNvtxWorker } from '../load/nvtxWorker.js';
import { computeInBackground } from './backgroundParts.js';

await runNvtxWorker(computeInBackground);
