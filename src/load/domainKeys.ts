/** NVTX (domain, pid) pairs as one number: the key every NVTX reader and analysis groups by. */

/** Key of a (domainId, pid) pair; domain ids are small, pids 24-bit. */
export function domainKey(domainId: number | null, pid: number): number {
  return (domainId ?? 0) * 16777216 + pid;
}

/** The domain id and pid a `domainKey` was made of. */
export function domainKeyParts(key: number): { domainId: number; pid: number } {
  return { domainId: Math.floor(key / 16777216), pid: key % 16777216 };
}

/** Domain ids `domainKey` holds exactly (with a 24-bit pid, the key stays below 2^53). */
const MAX_KEYED_DOMAIN = 2 ** 29;

/**
 * Whether a row's (domain, pid) as read (`coalesce(domainId, 0)`, the pid of its globalTid) has a
 * `domainKey` that gives both back: not for a NULL pid, nor a domain id that is not an integer in
 * [0, 2^29) (a text, a negative or a huge id: damaged or edited exports), which SQL groups apart.
 */
export function keysDomainExactly(domainId: unknown, pid: number | null): boolean {
  return pid !== null && typeof domainId === 'number' && Number.isInteger(domainId) && domainId >= 0 && domainId < MAX_KEYED_DOMAIN;
}
