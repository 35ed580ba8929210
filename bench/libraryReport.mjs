#!/usr/bin/env node
/**
 * `iterscope report F --log LOG --format md` as a library user writes it: the package imported by
 * its name (package.json `exports`: dist/iterscope-lib.mjs), the analysis of every report part,
 * then the Markdown. For `npm run bench` (its `report-library` line): the same work as the CLI's
 * `report`, timed through the library entry.
 *
 *   node bench/libraryReport.mjs EXPORT [LOG...]
 */
import { analyzeExport, parseIterationLogFile, renderReport, REPORT_PARTS, withExport } from 'iterscope';

const [file, ...logFiles] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/libraryReport.mjs EXPORT [LOG...]\n');
  process.exit(2);
}
const logs = logFiles.map(parseIterationLogFile);
const analysis = withExport(file, (h) => analyzeExport(h, { parts: REPORT_PARTS, logs }));
process.stdout.write(await renderReport(analysis, 'md'));
