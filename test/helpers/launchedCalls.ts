import type { LaunchedCalls } from '../../src/load/launchedCalls.js';

/** A fold of launched calls as plain values: typed arrays (views or exact) and the key map compared by value. */
export function plainLaunchedCalls(c: LaunchedCalls) {
  return {
    ...c,
    thread: [...c.thread],
    start: [...c.start.subarray(0, c.count)],
    end: [...c.end.subarray(0, c.count)],
    opStart: [...c.opStart],
    opEnd: [...c.opEnd],
    opCount: [...c.opCount],
    sharedKey: [...c.sharedKey],
    keyOf: [...c.keyOf].sort((a, b) => a[0] - b[0]),
  };
}
