import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/typedArrayEquality.ts', 'test/setup/processState.ts'],
    // The test files of a worker share one process and its imported modules (src/ keeps no cache
    // in modules; the V8 policies it holds are checked below): importing the sources once per
    // worker, not once per file, took the suite from 639 to 546 s on this 2-core VM (import time
    // 138 -> 32 s). A file must leave the process's state as it found it: test/setup/processState.ts
    // checks the V8 flags an analysis sets.
    isolate: false,
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
