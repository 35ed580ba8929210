/** TensorRT-LLM iteration logs: parsing, normalisation to one record type, and merging. */
export type {
  IterationLogRecord,
  IterationMetrics,
  LogFormat,
  MergedIterationRecord,
  ParsedIterationLog,
  SkippedLine,
} from './logRecords.js';
export { MAX_LINE_CHARS, MAX_SKIPPED_SAMPLES } from './logRecords.js';
export { detectLineFormat } from './detect.js';
export {
  parseIterationLogFile,
  parseIterationLogLine,
  parseIterationLogText,
  recordsByIter,
  type LineResult,
} from './parse.js';
export { parsePyLiteral, PyLiteralError, type PyValue } from './pyLiteral.js';
export { parseLogTimestamp } from './timestamps.js';
export { toDurationMs } from './values.js';
