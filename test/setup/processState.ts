/**
 * The test files of a worker share its process (vitest.config.ts: `isolate: false`), so a file must
 * leave what is the process's as it found it. V8's run-time flags are: an analysis sets the young
 * generation small for its span and records it in ITERSCOPE_V8_FLAGS (src/v8/youngGeneration.ts).
 * A file that ends with the record changed fails here, by name, rather than a later file of the
 * same worker that finds the flags set.
 */
import { afterAll } from 'vitest';

const flagsAtStart = process.env.ITERSCOPE_V8_FLAGS;

afterAll(() => {
  const now = process.env.ITERSCOPE_V8_FLAGS;
  if (now !== flagsAtStart) throw new Error(`this file left ITERSCOPE_V8_FLAGS ${JSON.stringify(now ?? null)} (was ${JSON.stringify(flagsAtStart ?? null)}): V8's flags are the process's, shared by the next test files`);
});
