import { UsageError } from './errors.js';

/**
 * User regular expressions (`--categories` rules, `--iteration-range /re/`) run against every
 * distinct kernel or NVTX name of an export with V8's backtracking engine, where a pattern such as
 * `(a+)+$` takes exponential time on a long name. Two bounds keep that work finite:
 * - patterns with a nested repeat (star height above 1: `(a+)+`, `(a*)*`, `(?:x+y?)*`, `(a|a)*`)
 *   are rejected with a usage error; rewrite them without the inner repeat;
 * - a name is matched on its first USER_REGEX_MAX_TEXT characters only.
 * Polynomial patterns (`.*a.*a.*a$`) stay possible; on at most 4096 characters they finish.
 */
export const USER_REGEX_MAX_TEXT = 4096;
/** Longest pattern accepted (characters). */
export const USER_REGEX_MAX_SOURCE = 10_000;

/** A RegExp that only ever sees the first USER_REGEX_MAX_TEXT characters of its input. */
class LengthCappedRegExp extends RegExp {
  override exec(text: string): RegExpExecArray | null {
    return super.exec(text.length > USER_REGEX_MAX_TEXT ? text.slice(0, USER_REGEX_MAX_TEXT) : text);
  }
}

/** Compiles a user pattern (see the module comment); `what` names it in messages. */
export function compileUserRegex(source: string, flags: string, what: string): RegExp {
  if (source.length > USER_REGEX_MAX_SOURCE) throw new UsageError(`${what}: pattern of ${source.length} characters; at most ${USER_REGEX_MAX_SOURCE} are accepted`);
  let re: RegExp;
  try {
    re = new LengthCappedRegExp(source, flags);
  } catch (err) {
    throw new UsageError(`${what}: invalid pattern: ${(err as Error).message}`);
  }
  const nested = nestedRepeat(source);
  if (nested) {
    throw new UsageError(
      `${what}: ${nested}: a repeated group that itself repeats can take exponential time on long names; write it without the inner repeat (names are matched on their first ${USER_REGEX_MAX_TEXT} characters)`,
    );
  }
  return re;
}

interface GroupState {
  /** Where the group starts in the source (for the message). */
  start: number;
  /** Holds a repeat (`*`, `+`, `{n,}`, `{n,m}` with m > 1) at any depth. */
  repeats: boolean;
  /** Its alternatives, as written, when it has `|` at its own depth. */
  alternatives: string[];
  altStart: number;
}

/**
 * The first group of `source` that repeats and holds a repeat, or whose repeated alternatives are
 * identical (`(a|a)*`), as `'(a+)+' at character 0`; null when there is none. A small scanner of
 * JavaScript regex syntax: escapes, character classes, group openers and quantifiers.
 */
export function nestedRepeat(source: string): string | null {
  const stack: GroupState[] = [{ start: 0, repeats: false, alternatives: [], altStart: 0 }];
  let i = 0;
  /** Length of the quantifier at `at` and whether it repeats (0 when there is none). */
  const quantifier = (at: number): { len: number; repeats: boolean } => {
    const c = source[at];
    if (c === '*' || c === '+') return { len: 1 + (source[at + 1] === '?' ? 1 : 0), repeats: true };
    if (c === '?') return { len: 1 + (source[at + 1] === '?' ? 1 : 0), repeats: false };
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}\??/.exec(source.slice(at));
      if (m) {
        const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
        return { len: m[0].length, repeats: max > 1 };
      }
    }
    return { len: 0, repeats: false };
  };
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '[') {
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '(') {
      let body = i + 1;
      const opener = /^\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)/.exec(source.slice(body));
      if (opener) body += opener[0].length;
      stack.push({ start: i, repeats: false, alternatives: [], altStart: body });
      i = body;
      continue;
    } else if (c === '|') {
      const g = stack[stack.length - 1];
      g.alternatives.push(source.slice(g.altStart, i));
      g.altStart = i + 1;
      i++;
      continue;
    } else if (c === ')' && stack.length > 1) {
      const g = stack.pop()!;
      if (g.alternatives.length) g.alternatives.push(source.slice(g.altStart, i));
      const q = quantifier(i + 1);
      const text = source.slice(g.start, i + 1 + q.len);
      if (q.repeats && g.repeats) return `'${clip(text)}' at character ${g.start}`;
      if (q.repeats && new Set(g.alternatives).size < g.alternatives.length) return `'${clip(text)}' (identical alternatives) at character ${g.start}`;
      const parent = stack[stack.length - 1];
      parent.repeats ||= g.repeats || q.repeats;
      i += 1 + q.len;
      continue;
    } else {
      i++;
    }
    const q = quantifier(i);
    if (q.len) {
      if (q.repeats) stack[stack.length - 1].repeats = true;
      i += q.len;
    }
  }
  return null;
}

const clip = (s: string) => (s.length > 60 ? `${s.slice(0, 60)}...` : s);
