/**
 * What nsys stores as columns and Kineto only as names: a kernel's short name, a memcpy's
 * direction and memory kinds, a memset's memory kind.
 */

/**
 * The base function name, as nsys's `shortName`: no return type, no parameter list, no template
 * arguments, no namespace (`void at::native::vectorized_gather_kernel<16, long>(char*, ...)` ->
 * `vectorized_gather_kernel`). Names without a parameter list (`nvjet_...`) are kept whole.
 */
export function kernelShortName(name: string): string {
  let depth = 0;
  let paren = -1;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '<') depth++;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (c === '(' && depth === 0) {
      paren = i;
      break;
    }
  }
  let head = paren >= 0 ? name.slice(0, paren) : name;
  // Template arguments at the end of the function name.
  if (head.endsWith('>')) {
    let d = 0;
    for (let i = head.length - 1; i >= 0; i--) {
      if (head[i] === '>') d++;
      else if (head[i] === '<' && --d === 0) {
        head = head.slice(0, i);
        break;
      }
    }
  }
  // Return type and namespaces: the last space- or ::-separated component outside brackets.
  let cut = 0;
  depth = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '<') depth++;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0 && c === ' ') cut = i + 1;
    else if (depth === 0 && c === ':' && head[i + 1] === ':') cut = i + 2;
  }
  const short = head.slice(cut).trim();
  return short || name;
}

/** `ENUM_CUDA_MEMCPY_OPER` ids by Kineto's direction token (`Memcpy HtoD (...)`). */
const COPY_KINDS: Readonly<Record<string, number>> = {
  HtoD: 1,
  DtoH: 2,
  HtoA: 3,
  AtoH: 4,
  AtoA: 5,
  AtoD: 6,
  DtoA: 7,
  DtoD: 8,
  HtoH: 9,
  PtoP: 10,
};

/** `ENUM_CUDA_MEM_KIND` ids by Kineto's memory-kind word. */
const MEM_KINDS: Readonly<Record<string, number>> = {
  Pageable: 0,
  Pinned: 1,
  Device: 2,
  Array: 3,
  Managed: 4,
  'Device Static': 5,
  'Managed Static': 6,
  Unknown: 7,
};
const UNKNOWN_MEM_KIND = 7;

export interface MemcpyKinds {
  copyKind: number;
  srcKind: number;
  dstKind: number;
}

/** `Memcpy HtoD (Pageable -> Device)` -> copyKind 1, srcKind 0, dstKind 2 (0/7/7 when unknown). */
export function memcpyKinds(name: string): MemcpyKinds {
  const m = /^Memcpy (\w+)(?: \(([^)]*?) -> ([^)]*)\))?/.exec(name);
  return {
    copyKind: (m && COPY_KINDS[m[1]]) ?? 0,
    srcKind: (m?.[2] !== undefined ? MEM_KINDS[m[2]] : undefined) ?? UNKNOWN_MEM_KIND,
    dstKind: (m?.[3] !== undefined ? MEM_KINDS[m[3]] : undefined) ?? UNKNOWN_MEM_KIND,
  };
}

/** `Memset (Device)` -> 2. */
export function memsetKind(name: string): number {
  const m = /^Memset \(([^)]*)\)/.exec(name);
  return (m ? MEM_KINDS[m[1]] : undefined) ?? UNKNOWN_MEM_KIND;
}
