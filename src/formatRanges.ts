/** Lists of iteration numbers as people read them, for notes and reports. */

/** `0..99` style text for a sorted list of integers. */
export function compactRanges(values: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j] + 1) j++;
    out.push(j === i ? String(values[i]) : `${values[i]}..${values[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}
