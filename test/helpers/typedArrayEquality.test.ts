/** The byte-for-byte typed-array equality every test file runs with (test/setup/typedArrayEquality.ts). */
import { describe, expect, it } from 'vitest';

describe('typed arrays in toEqual', () => {
  it('equal bytes are equal, nested in objects too, whatever the offset into their buffer', () => {
    const whole = new Float64Array([9, 1, 2, NaN]);
    expect(whole.subarray(1)).toEqual(new Float64Array([1, 2, NaN]));
    expect({ cols: { start: new Int32Array([3, 4]) } }).toEqual({ cols: { start: new Int32Array([3, 4]) } });
  });

  it('one element apart, another length, another element type, or -0 against 0: not equal', () => {
    expect(new Float64Array([1, 2])).not.toEqual(new Float64Array([1, 3]));
    expect({ cols: new Int32Array(1000).fill(7) }).not.toEqual({ cols: new Int32Array(1000).fill(7).map((v, i) => (i === 999 ? 8 : v)) });
    expect(new Float64Array([1, 2])).not.toEqual(new Float64Array([1, 2, 0]));
    expect(new Int32Array([1, 2])).not.toEqual(new Uint32Array([1, 2]));
    expect(new Float64Array([-0])).not.toEqual(new Float64Array([0]));
  });

  it('a typed array against a plain array of the same numbers: not equal, as before', () => {
    expect(new Int32Array([1, 2])).not.toEqual([1, 2]);
  });
});
