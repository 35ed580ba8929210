import { IterscopeError, type ErrorCode } from '../errors.js';

/** A task for one export, sent to a worker. */
export interface WorkerRequest {
  id: number;
  task: string;
  file: string;
  opts: unknown;
}

/** An error as plain data (an Error crossing threads keeps neither its class nor its fields). */
export interface WireError {
  name: string;
  message: string;
  /** IterscopeError code (E_NOT_SQLITE, ...) or a Node errno code (ENOENT, ...). */
  code?: string;
  /** The file an IterscopeError is about. */
  file?: string;
  /** The export the task was working on. */
  input: string;
  iterscope: boolean;
  stack?: string;
}

/** A worker's reply; `notes`: the export's excluded-row notes (rowChecks.ts), said by the main thread. */
export type WorkerReply = { id: number; ok: true; result: unknown; notes?: string[] } | { id: number; ok: false; error: WireError };

export function toWireError(err: unknown, input: string): WireError {
  if (err instanceof IterscopeError) {
    const prefix = err.file ? `${err.file}: ` : '';
    const message = prefix && err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
    return { name: err.name, message, code: err.code, file: err.file, input, iterscope: true };
  }
  const e = err as NodeJS.ErrnoException;
  return { name: e?.name ?? 'Error', message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : undefined, input, iterscope: false, stack: e?.stack };
}

/**
 * The error to throw in the main thread: an IterscopeError of the same code (so the CLI prints
 * `iterscope: <file>: <problem>` and exits 2), or an Error whose message names the export.
 */
export function fromWireError(w: WireError): Error {
  if (w.iterscope && w.code) {
    const e = new IterscopeError(w.code as ErrorCode, w.file ? w.message : `${w.input}: ${w.message}`, w.file);
    e.name = w.name;
    return e;
  }
  const e = new Error(`${w.input}: ${w.message}`) as NodeJS.ErrnoException;
  e.name = w.name;
  if (w.code) e.code = w.code;
  if (w.stack) e.stack = `${e.name}: ${e.message}\n(in the worker thread) ${w.stack}`;
  return e;
}
