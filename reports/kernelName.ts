/** Longest kernel name the human-readable tables print (the full name stays in CSV/JSON and on hover in HTML). */
export const KERNEL_NAME_WIDTH = 72;

/** Index of the bracket closing the one at `open` (`<`/`>` or `(`/`)`), or -1. */
function closing(name: string, open: number): number {
  const o = name[open];
  const c = o === '<' ? '>' : ')';
  let depth = 0;
  for (let i = open; i < name.length; i++) {
    if (name[i] === o) depth++;
    else if (name[i] === c && --depth === 0) return i;
  }
  return -1;
}

/**
 * A templated C++ kernel name people can read in a table: no leading `void`, template arguments
 * as `<…>`, no parameter list; `(anonymous namespace)::` and other scope parentheses stay.
 * `void at::native::vectorized_elementwise_kernel<(int)4, at::native::…>(int, T2, T3)` ->
 * `at::native::vectorized_elementwise_kernel<…>`. Plain names (`nvjet_sm90_tst_...`) are kept,
 * and anything still longer than `width` is cut with `…`.
 */
export function shortKernelName(name: string, width = KERNEL_NAME_WIDTH): string {
  const src = name.replace(/^void\s+/, '');
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (ch === '<' || ch === '(') {
      const end = closing(src, i);
      if (end < 0) {
        out += src.slice(i);
        break;
      }
      if (ch === '<') out += '<…>';
      // A scope in parentheses (`(anonymous namespace)::`) is part of the name; an argument list is not.
      else if (src.startsWith('::', end + 1)) out += src.slice(i, end + 1);
      i = end;
      continue;
    }
    out += ch;
  }
  out = out.trim() || name;
  return out.length > width ? `${out.slice(0, width - 1)}…` : out;
}
