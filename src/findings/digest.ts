import type { FindingsResult, Severity } from './finding.js';

/** What a run summary keeps of a finding: enough for `compare` to say what appeared or went away. */
export interface FindingDigest {
  id: string;
  title: string;
  severity: Severity;
  recoverableNs: number;
  recoverableShare: number | null;
  /** Coverage only: findings that could not be looked for (their data was not traced). */
  hides?: string[];
}

export function digestFindings(result: FindingsResult): FindingDigest[] {
  return result.findings.map((f) => ({ id: f.id, title: f.title, severity: f.severity, recoverableNs: f.recoverableNs, recoverableShare: f.recoverableShare, ...(f.hides ? { hides: f.hides } : {}) }));
}

/** Findings of head that base did not have, base's that head no longer has, and those in both. */
export interface FindingChanges {
  appeared: FindingDigest[];
  disappeared: FindingDigest[];
  persisted: { id: string; title: string; baseNs: number; headNs: number }[];
  /** In one run only because the other did not trace what the finding rests on: not a change. */
  untraced: (FindingDigest & { missingIn: 'base' | 'head' })[];
}

/** By stable id (coverage notes are facts of the capture, not findings to gain or lose). */
export function findingChanges(base: readonly FindingDigest[], head: readonly FindingDigest[]): FindingChanges {
  const real = (l: readonly FindingDigest[]) => l.filter((f) => f.id !== 'coverage');
  const hidden = (l: readonly FindingDigest[]) => new Set(l.find((f) => f.id === 'coverage')?.hides ?? []);
  const b = new Map(real(base).map((f) => [f.id, f]));
  const h = new Map(real(head).map((f) => [f.id, f]));
  const hiddenInBase = hidden(base);
  const hiddenInHead = hidden(head);
  const onlyHead = [...h.values()].filter((f) => !b.has(f.id));
  const onlyBase = [...b.values()].filter((f) => !h.has(f.id));
  return {
    appeared: onlyHead.filter((f) => !hiddenInBase.has(f.id)),
    disappeared: onlyBase.filter((f) => !hiddenInHead.has(f.id)),
    untraced: [
      ...onlyHead.filter((f) => hiddenInBase.has(f.id)).map((f) => ({ ...f, missingIn: 'base' as const })),
      ...onlyBase.filter((f) => hiddenInHead.has(f.id)).map((f) => ({ ...f, missingIn: 'head' as const })),
    ],
    persisted: [...h.values()].filter((f) => b.has(f.id)).map((f) => ({ id: f.id, title: f.title, baseNs: b.get(f.id)!.recoverableNs, headNs: f.recoverableNs })),
  };
}
