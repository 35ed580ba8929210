import { statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { parseNonNegativeInt } from '../optionValues.js';

/** The per-capture options of `engines` as given on the command line (each repeatable). */
export interface EngineOptionValues {
  /** `NAME=EXPORT`. */
  label?: string[];
  /** `EXPORT=FILE`, or `FILE` (the export in FILE's folder). */
  log?: string[];
  benchmark?: string[];
  /** `EXPORT=N`, or `N` with a single export. */
  tokens?: string[];
}

/** What was given for one export. */
export interface ExportInputs {
  label?: string;
  logs: string[];
  benchmark?: string;
  tokens?: number;
}

/** A path without its report/export extension, absolute: `run.nsys-rep` and its `run.sqlite` name one capture. */
const captureKey = (p: string) => {
  const abs = resolve(p);
  return /^\.(sqlite|nsys-rep)$/i.test(extname(abs)) ? abs.slice(0, -extname(abs).length) : abs;
};

const isDirectory = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Which export `ref` names: a label given with `--label`, the export's path (its `.nsys-rep` too),
 * or a folder holding exactly one of the exports; -1 when none.
 */
function exportIndexOf(ref: string, exports: readonly string[], labels: readonly (string | undefined)[]): number {
  const byLabel = labels.indexOf(ref);
  if (byLabel >= 0) return byLabel;
  const key = captureKey(ref);
  const byPath = exports.findIndex((e) => captureKey(e) === key);
  if (byPath >= 0) return byPath;
  if (!isDirectory(ref)) return -1;
  const inFolder = exports.flatMap((e, i) => (dirname(resolve(e)) === resolve(ref) ? [i] : []));
  return inFolder.length === 1 ? inFolder[0] : -1;
}

/** `EXPORT=VALUE` where the text before some `=` names an export; null when none does (a plain value). */
function pairOf(text: string, exports: readonly string[], labels: readonly (string | undefined)[]): { index: number; value: string } | null {
  for (let i = text.indexOf('='); i > 0; i = text.indexOf('=', i + 1)) {
    const index = exportIndexOf(text.slice(0, i), exports, labels);
    if (index >= 0) return { index, value: text.slice(i + 1) };
  }
  return null;
}

/** The exports in a file's folder (`--log FILE` without `EXPORT=`). */
function exportsBeside(file: string, exports: readonly string[]): number[] {
  const folder = dirname(resolve(file));
  return exports.flatMap((e, i) => (dirname(resolve(e)) === folder ? [i] : []));
}

function labelsOf(exports: readonly string[], values: readonly string[]): (string | undefined)[] {
  const labels: (string | undefined)[] = exports.map(() => undefined);
  for (const v of values) {
    const eq = v.indexOf('=');
    const name = eq > 0 ? v.slice(0, eq).trim() : '';
    const index = eq > 0 ? exportIndexOf(v.slice(eq + 1), exports, []) : -1;
    if (!name || index < 0) throw new UsageError(`--label expects NAME=EXPORT naming one of the exports (got '${v}')`);
    if (labels[index] !== undefined) throw new UsageError(`--label: ${exports[index]} is labelled twice ('${labels[index]}', '${name}')`);
    if (labels.includes(name)) throw new UsageError(`--label: '${name}' names two exports`);
    labels[index] = name;
  }
  return labels;
}

/**
 * The exports a file option applies to: `EXPORT=FILE`, else the exports in FILE's folder (all of
 * them for a log, which is joined step by step; exactly one for a benchmark file).
 */
function targetsOf(option: string, v: string, exports: readonly string[], labels: readonly (string | undefined)[], oneOnly: boolean): { indexes: number[]; file: string } {
  const pair = pairOf(v, exports, labels);
  if (pair) return { indexes: [pair.index], file: pair.value };
  const beside = exportsBeside(v, exports);
  if (beside.length === 0) throw new UsageError(`${option} ${v}: no export given is in its folder; write EXPORT=FILE`);
  if (oneOnly && beside.length > 1) throw new UsageError(`${option} ${v}: ${beside.length} exports are in its folder; write EXPORT=FILE`);
  return { indexes: beside, file: v };
}

/** Each export's label, logs, benchmark file and token count from the options (usage errors before any export is read). */
export function resolveEngineInputs(exports: readonly string[], opts: EngineOptionValues): ExportInputs[] {
  const labels = labelsOf(exports, opts.label ?? []);
  const out: ExportInputs[] = exports.map((_, i) => ({ label: labels[i], logs: [] }));
  for (const v of opts.log ?? []) {
    const { indexes, file } = targetsOf('--log', v, exports, labels, false);
    for (const i of indexes) out[i].logs.push(file);
  }
  for (const v of opts.benchmark ?? []) {
    const { indexes, file } = targetsOf('--benchmark', v, exports, labels, true);
    if (out[indexes[0]].benchmark !== undefined) throw new UsageError(`--benchmark: two files for ${exports[indexes[0]]}`);
    out[indexes[0]].benchmark = file;
  }
  for (const v of opts.tokens ?? []) {
    const pair = pairOf(v, exports, labels);
    if (!pair && exports.length > 1) throw new UsageError(`--tokens ${v}: ${exports.length} exports given; write EXPORT=N`);
    const index = pair?.index ?? 0;
    if (out[index].tokens !== undefined) throw new UsageError(`--tokens: two counts for ${exports[index]}`);
    out[index].tokens = parseNonNegativeInt(pair?.value ?? v, '--tokens');
  }
  return out;
}
