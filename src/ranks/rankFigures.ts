import type { RunSummary } from '../summary/runSummary.js';
import { COMMUNICATION_CATEGORY, type RankFigures } from '../iterations/rankIterationFigures.js';

// The per-export figures are the analysis's `rankFigures` part (below the pipeline); the ranks read them.
export { COMMUNICATION_CATEGORY, collectiveTimes, rankFiguresFromIterations, type CollectiveTimes, type RankFigures, type RankIterationFigures } from '../iterations/rankIterationFigures.js';

/** One rank's figures from a summary.json (per-iteration busy, kernel and category time; no timestamps). */
export function rankFiguresFromSummary(summary: RunSummary, file: string, category = COMMUNICATION_CATEGORY): RankFigures {
  return {
    file,
    source: 'summary',
    sessionStartUtcNs: null,
    communicationCategory: category,
    pid: null,
    iterations: summary.iterations.map((r) => ({ iter: r.iter, wallNs: r.wallNs, gpuBusyNs: r.gpuBusyNs, kernelNs: r.kernelNs, communicationNs: r.categoryNs[category] ?? 0 })),
    collectives: null,
    notes: [],
  };
}
