/**
 * The Node options a worker thread inherits from its process. A worker is started with its
 * parent's `process.execArgv` unless told otherwise, and Node refuses some of them in a worker:
 * a program run as `node --input-type=module -e "..."` (a user's one-liner importing the library)
 * made every worker fail with ERR_INPUT_TYPE_NOT_ALLOWED. The options that only say how the main
 * script is given are left out; the rest (memory limits, loaders, conditions) are kept.
 */
/** Main-script options given as one word (`--input-type=module`, `--eval=...`). */
const MAIN_SCRIPT_WITH_VALUE = /^(--input-type|--eval|--print)=/;
/** Main-script options whose value is the next word (`-e "..."`, `--input-type module`). */
const MAIN_SCRIPT_THEN_VALUE = /^(--input-type|-e|--eval|-p|--print)$/;

export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (MAIN_SCRIPT_THEN_VALUE.test(arg)) i++;
    else if (!MAIN_SCRIPT_WITH_VALUE.test(arg)) kept.push(arg);
  }
  return kept;
}
