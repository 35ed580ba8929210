/**
 * Typed arrays compared byte for byte. Vitest's `toEqual` walks a typed array element by element
 * through its generic equality (a few microseconds each): the tests that hold a worker's columns
 * against this thread's, millions of values per fixture, spent most of their time there. Equal bytes
 * are equal `toEqual` values (NaN with NaN, -0 apart from 0 as there); only NaNs of different bit
 * patterns, which `toEqual` would call equal, differ here.
 */
import { Buffer } from 'node:buffer';
import { expect } from 'vitest';

function bytesOf(view: ArrayBufferView): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

function typedArraysEqual(a: unknown, b: unknown): boolean | undefined {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a instanceof DataView || b instanceof DataView) return undefined;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  return a.byteLength === b.byteLength && bytesOf(a).equals(bytesOf(b));
}

// Once per process: the files of a worker share it (vitest.config.ts), and this file runs before each.
const REGISTERED = Symbol.for('iterscope.test.typedArrayEquality');
const registry = globalThis as { [REGISTERED]?: true };
if (!registry[REGISTERED]) {
  expect.addEqualityTesters([typedArraysEqual]);
  registry[REGISTERED] = true;
}
