/**
 * Worker threads are started without the options that only say how the main script was given
 * (`node --input-type=module -e "..."`, as a user's one-liner importing the library runs): Node
 * refuses them in a worker (ERR_INPUT_TYPE_NOT_ALLOWED). The end-to-end case is in
 * test/api/libraryBundle.test.ts; here the filter itself.
 */
import { describe, expect, it } from 'vitest';
import { workerExecArgv } from '../../src/load/workerExecArgv.js';

describe('workerExecArgv', () => {
  it('drops --input-type and -e/--eval/-p/--print with their script, keeps the rest', () => {
    expect(workerExecArgv(['--max-old-space-size=4096', '--input-type=module', '-e', 'import("iterscope")'])).toEqual(['--max-old-space-size=4096']);
    expect(workerExecArgv(['--input-type', 'module', '--eval', 'x', '--conditions=dev'])).toEqual(['--conditions=dev']);
    expect(workerExecArgv(['-p', '1+1', '--enable-source-maps'])).toEqual(['--enable-source-maps']);
    expect(workerExecArgv(['--eval=x', '--print=y'])).toEqual([]);
  });
  it('keeps a plain process\'s options as they are', () => {
    expect(workerExecArgv(['--import', 'tsx', '--expose-gc'])).toEqual(['--import', 'tsx', '--expose-gc']);
    expect(workerExecArgv([])).toEqual([]);
  });
});
