import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/typedArrayEquality.ts'],
    // Real-fixture tests open exports of up to ~17 MB; give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest runs cores - 1 files at once: one on CI's 2-core machine, the other core idle while
    // most tests wait on SQLite or a child CLI. Two there: the suite took 313 s instead of ~600 s
    // on an idle 2-core VM (1,163 tests).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
