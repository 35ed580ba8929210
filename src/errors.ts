/**
 * Typed errors with stable codes. Library code throws these; the CLI maps them to exit codes
 * (see `exitCodeFor`) and prints `iterscope: <message>` on one line, never a stack trace.
 */

export type ErrorCode =
  | 'E_USAGE' // bad command-line usage or option value
  | 'E_INPUT_MISSING' // path does not exist
  | 'E_INPUT_NOT_FILE' // path is a directory or not a regular file
  | 'E_INPUT_EMPTY' // zero-byte file
  | 'E_NOT_SQLITE' // not an SQLite database (or truncated/corrupt)
  | 'E_NOT_NSYS' // SQLite, but not an nsys export
  | 'E_NSYS_REP' // an .nsys-rep report that cannot be exported to SQLite here (no nsys, or nsys failed)
  | 'E_SCHEMA' // an nsys export that lacks a table/column an analysis needs
  | 'E_LOG' // an iteration log that cannot be used at all
  | 'E_ITERATIONS' // iterations cannot be found or numbered without more options
  | 'E_EMPTY_CAPTURE' // an nsys export (or trace) with no GPU work: nothing to analyse per iteration, summarize or compare
  | 'E_NOT_KINETO' // JSON or gzip, but not a complete PyTorch profiler (Kineto) trace
  | 'E_NSYS_REP' // an Nsight Systems report (.nsys-rep) where an SQLite export is needed
  | 'E_REGRESSION' // a gate found a regression
  | 'E_INCONCLUSIVE'; // a gate could not tell noise from change (only with --fail-on-inconclusive)

export class IterscopeError extends Error {
  readonly code: ErrorCode;
  /** The file the error is about, when there is one. */
  readonly file?: string;
  constructor(code: ErrorCode, message: string, file?: string) {
    super(file ? `${file}: ${message}` : message);
    this.name = 'IterscopeError';
    this.code = code;
    this.file = file;
  }
}

export class UsageError extends IterscopeError {
  constructor(message: string) {
    super('E_USAGE', message);
    this.name = 'UsageError';
  }
}

export class InputError extends IterscopeError {
  constructor(
    code: Extract<ErrorCode, 'E_INPUT_MISSING' | 'E_INPUT_NOT_FILE' | 'E_INPUT_EMPTY' | 'E_NOT_SQLITE' | 'E_NOT_NSYS' | 'E_NSYS_REP' | 'E_LOG'>,
    file: string,
    message: string,
  ) {
    super(code, message, file);
    this.name = 'InputError';
  }
}

/** A `.json` / `.json.gz` input that is truncated, malformed, or not a PyTorch profiler trace. */
export class KinetoTraceError extends IterscopeError {
  constructor(file: string, message: string) {
    super('E_NOT_KINETO', message, file);
    this.name = 'KinetoTraceError';
  }
}

/** An `.nsys-rep` report given where an SQLite export (or a Kineto trace) is read. */
export class NsysReportError extends IterscopeError {
  constructor(file: string, message: string) {
    super('E_NSYS_REP', message, file);
    this.name = 'NsysReportError';
  }
}

export class SchemaError extends IterscopeError {
  constructor(file: string, message: string) {
    super('E_SCHEMA', message, file);
    this.name = 'SchemaError';
  }
}

export class IterationError extends IterscopeError {
  constructor(message: string, file?: string) {
    super('E_ITERATIONS', message, file);
    this.name = 'IterationError';
  }
}

/**
 * A capture that recorded no GPU work (a client profiled instead of the server, a program that
 * died before its first CUDA call): what needs iterations cannot run on it. `reason` says why in
 * a few words; `consequence` what the command therefore cannot do.
 */
export class EmptyCaptureError extends IterscopeError {
  readonly reason: string;
  constructor(file: string, reason: string, consequence = 'nothing to analyse per iteration') {
    super('E_EMPTY_CAPTURE', `no GPU work was recorded, ${consequence}: ${reason}`, file);
    this.name = 'EmptyCaptureError';
    this.reason = reason;
  }

  /** The same error for a command that can do something else less (`nothing to compare`). */
  withConsequence(consequence: string): EmptyCaptureError {
    return new EmptyCaptureError(this.file ?? '', this.reason, consequence);
  }
}

/**
 * Exit codes documented in the README: 0 ok, 1 regression found by a gate, 2 bad usage or input,
 * 3 a gate that could not decide (inconclusive metrics, with `--fail-on-inconclusive` only).
 */
export const EXIT_OK = 0;
export const EXIT_REGRESSION = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INCONCLUSIVE = 3;

export function exitCodeFor(err: unknown): number {
  if (err instanceof IterscopeError) return err.code === 'E_REGRESSION' ? EXIT_REGRESSION : err.code === 'E_INCONCLUSIVE' ? EXIT_INCONCLUSIVE : EXIT_BAD_INPUT;
  return EXIT_BAD_INPUT;
}
