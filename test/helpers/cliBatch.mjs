// Runs many iterscope command lines in ONE node process (node startup dominates a CLI run on a
// small export): each job re-imports dist/src/cli/main.js with a fresh query string, so its
// top-level `main(process.argv)` runs again (its export `finished` settles when it is done), with
// stdout and stderr captured.
// Usage: node cliBatch.mjs jobs.json results.json   (jobs: [{ args: string[], env?: {} }])
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cli = pathToFileURL(join(here, '..', '..', 'dist', 'src', 'cli', 'main.js')).href;
const [jobsFile, resultsFile] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsFile, 'utf8'));
const results = [];
const realOut = process.stdout.write.bind(process.stdout);
const realErr = process.stderr.write.bind(process.stderr);
// Each import of main.js adds its 'error' listeners on stdout and stderr (closed pipes): no
// warning about their count, which would land in the next job's captured stderr.
process.stdout.setMaxListeners(0);
process.stderr.setMaxListeners(0);
let n = 0;
for (const job of jobs) {
  let out = '';
  let err = '';
  const savedEnv = { ...process.env };
  Object.assign(process.env, { GITHUB_STEP_SUMMARY: '' }, job.env ?? {});
  process.stdout.write = (chunk, enc, cb) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (typeof enc === 'function') enc();
    else if (typeof cb === 'function') cb();
    return true;
  };
  process.stderr.write = (chunk, enc, cb) => {
    err += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (typeof enc === 'function') enc();
    else if (typeof cb === 'function') cb();
    return true;
  };
  process.argv = [process.execPath, 'iterscope', ...job.args];
  process.exitCode = undefined;
  let status;
  try {
    const run = await import(`${cli}?job=${n++}`);
    await run.finished;
    status = process.exitCode ?? 0;
  } catch (e) {
    err += `batch: import failed: ${e?.stack ?? e}\n`;
    status = 99;
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
    for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
    Object.assign(process.env, savedEnv);
  }
  results.push({ args: job.args, status, stdout: out, stderr: err });
}
process.exitCode = 0;
writeFileSync(resultsFile, JSON.stringify(results));
