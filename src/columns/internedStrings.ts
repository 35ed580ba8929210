/**
 * Distinct strings, each once, numbered in the order of their first use: a column of numbers
 * then names them (NVTX texts, the step timeline's names, the gaps' launch-call names).
 */
export class InternedStrings {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  /** `s`'s number, given at its first use. */
  intern(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) this.index.set(s, (i = this.list.push(s) - 1));
    return i;
  }
}
