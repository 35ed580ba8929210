import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtEntry } from '../../builtEntry.js';
import { KinetoTraceError } from '../../errors.js';
import type { ConversionSummary } from './convert.js';

export interface ConvertedTrace {
  /** The nsys-shaped SQLite database (in its own directory under os.tmpdir()). */
  dbPath: string;
  summary: ConversionSummary;
  /** Deletes the database and its directory (idempotent). */
  remove(): void;
}

/**
 * The temp directory of one conversion and its removal: `keepUntilExit` deletes it at process exit
 * if its handle is never closed; `remove` deletes it now (idempotent) and drops that exit listener.
 * Each conversion owns its listener, so no list of directories outlives their handles.
 */
function conversionDirectory(): { dir: string; keepUntilExit(): void; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-kineto-'));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  return {
    dir,
    keepUntilExit: () => {
      process.once('exit', removeDir);
    },
    remove: () => {
      process.off('exit', removeDir);
      removeDir();
    },
  };
}

/** The compiled child entry (the bundled one inside the CLI bundle, see `builtEntry`). */
function converterEntry(): string {
  return builtEntry('iterscope-kineto.mjs', 'src/kineto/convert/convertMain.js');
}

/**
 * Converts a Kineto trace synchronously, so the synchronous export opener (`openInput`) can take
 * one: the streaming conversion (async: file and gunzip streams) runs in a child Node process
 * that writes the database to a fresh temp directory (only `tables`, when given: see
 * `InputReadOptions`). Never writes beside the input. Throws
 * `KinetoTraceError` for truncated or non-Kineto JSON.
 */
export function convertKinetoTraceSync(input: string, tables?: readonly string[]): ConvertedTrace {
  const { dir, keepUntilExit, remove } = conversionDirectory();
  const dbPath = join(dir, 'trace.sqlite');
  const r = spawnSync(process.execPath, [converterEntry(), input, dbPath, ...(tables ? [tables.join(',')] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  let reply: { ok?: ConversionSummary; error?: { code: string; message: string } } = {};
  try {
    reply = JSON.parse(line);
  } catch {
    // Reported below.
  }
  if (reply.ok) {
    keepUntilExit();
    return { dbPath, summary: reply.ok, remove };
  }
  remove();
  if (reply.error?.code === 'E_NOT_KINETO') throw new KinetoTraceError(input, reply.error.message);
  const why = reply.error?.message ?? (r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit status ${r.status}`);
  throw new Error(`${input}: converting the PyTorch profiler trace failed: ${why}`);
}
