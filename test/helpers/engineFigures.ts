import { expect } from 'vitest';
import { runCli } from './cli.js';

/** An `iterations --format json` row, as far as `compare`'s engine table needs it. */
export interface EngineRow {
  phase: string;
  gpuBusyNs: number;
  gpuIdleNs: number;
  wallNs: number;
  kernelCount: number;
  contextTokens: number | null;
  generationRequests: number | null;
  generationTokens: number | null;
}

/** The rows `iterations --log LOG --format json` prints for one run. */
export function iterationRows(file: string, log: string): EngineRow[] {
  const r = runCli(['iterations', file, '--log', log, '--format', 'json']);
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout).iterations as EngineRow[];
}

/**
 * The engine table's figures as a reader computes them from a set of rows: a per-token figure
 * only when every row has the count (generated tokens: generation tokens, else generation requests).
 */
export function expectedEngineFigures(rows: EngineRow[]) {
  const sum = (f: (r: EngineRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const busy = sum((r) => r.gpuBusyNs);
  const ctxKnown = rows.every((r) => r.contextTokens !== null);
  const genKnown = rows.every((r) => r.generationTokens !== null || r.generationRequests !== null);
  const ctx = sum((r) => r.contextTokens ?? 0);
  const gen = sum((r) => r.generationTokens ?? r.generationRequests ?? 0);
  return {
    iterations: rows.length,
    gpuNsPerIteration: busy / rows.length,
    gpuNsPerContextToken: ctxKnown && ctx > 0 ? busy / ctx : null,
    gpuNsPerGeneratedToken: genKnown && gen > 0 ? busy / gen : null,
    kernelsPerIteration: sum((r) => r.kernelCount) / rows.length,
    idleShare: sum((r) => r.gpuIdleNs) / sum((r) => r.wallNs),
  };
}
