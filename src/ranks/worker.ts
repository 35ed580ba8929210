/**
 * Worker-thread entry of `analyzeMany`: runs one task on one export per message and posts the
 * result back (structured clone: plain objects, arrays, typed arrays, bigint, Map). Errors travel as
 * plain data (`WireError`) because an Error loses its class and fields on the way; the pool
 * rebuilds them so the CLI still prints one line naming the file and exits 2.
 */
import { parentPort } from 'node:worker_threads';
import { runTask, type TaskName, type TaskOptions } from './tasks.js';
import { toWireError, type WorkerReply, type WorkerRequest } from './wire.js';
import { setExcludedRowSink } from '../export/excludedRows.js';

if (!parentPort) throw new Error('src/ranks/worker.js is a worker-thread entry, not a script');
const port = parentPort;

port.on('message', (msg: WorkerRequest) => {
  let reply: WorkerReply;
  // The notes on rows the export left out (said when it is closed) go back with the result: the
  // main thread prints them, as it does for the exports it reads itself.
  const notes: string[] = [];
  setExcludedRowSink((note) => notes.push(note));
  try {
    reply = { id: msg.id, ok: true, result: runTask(msg.task as TaskName, msg.file, msg.opts as TaskOptions), notes };
  } catch (err) {
    reply = { id: msg.id, ok: false, error: toWireError(err, msg.file) };
  } finally {
    setExcludedRowSink(null);
  }
  try {
    port.postMessage(reply);
  } catch (err) {
    // A result that cannot be cloned (a function, a class with private state) is a bug: say which.
    port.postMessage({ id: msg.id, ok: false, error: toWireError(new Error(`task ${msg.task}: result cannot cross threads: ${(err as Error).message}`), msg.file) } satisfies WorkerReply);
  }
});
