/**
 * Captures that cannot answer (../shared/fixtures/health-*): the field guide's command line over a
 * benchmark client that dies at its first request, and over a client whose server ran outside the
 * capture. Every command reads them; the first finding says that no GPU work was recorded and why;
 * the numbers asserted are read from the export independently (better-sqlite3, plain SQL).
 */
import BetterSqlite3 from 'better-sqlite3';
import { copyFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

interface ExportFacts {
  pid: number;
  command: string;
  stderrLastLine: string | null;
  stdoutLastLine: string | null;
  cpuSamples: number;
  schedEvents: number;
  warnings: string[];
}

/** What the export says, read with plain SQL (not through iterscope's queries). */
function readFacts(file: string): ExportFacts {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const streams = db
      .prepare(`SELECT (p.globalPid >> 24) & 16777215 AS pid, f.value AS file, c.value AS content FROM ProcessStreams p JOIN StringIds f ON f.id = p.filenameId JOIN StringIds c ON c.id = p.contentId`)
      .all() as { pid: number; file: string; content: string }[];
    const last = (kind: string) => {
      const lines = (streams.find((s) => s.file.includes(kind))?.content ?? '').split('\n').filter((l) => l.trim() !== '');
      return lines.length ? lines[lines.length - 1] : null;
    };
    const pid = streams[0].pid;
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE (globalTid >> 24) & 16777215 = ?`).get(pid) as { n: number }).n;
    const args = db.prepare(`SELECT name, value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:COMMAND' OR name LIKE 'PROCESS_0:ARGUMENT_%' ORDER BY name`).all() as { name: string; value: string }[];
    return {
      pid,
      command: [args.find((a) => a.name === 'PROCESS_0:COMMAND')!.value, ...args.filter((a) => a.name !== 'PROCESS_0:COMMAND').map((a) => a.value)].join(' '),
      stderrLastLine: last('stderr'),
      stdoutLastLine: last('stdout'),
      cpuSamples: count('COMPOSITE_EVENTS'),
      schedEvents: count('SCHED_EVENTS'),
      warnings: (db.prepare(`SELECT text FROM DIAGNOSTIC_EVENT d JOIN ENUM_DIAGNOSTIC_SEVERITY_LEVEL e ON e.id = d.severity WHERE e.name = 'Warning' ORDER BY timestamp`).all() as { text: string }[]).map((r) => r.text),
    };
  } finally {
    db.close();
  }
}

const stderrLines = (r: CliResult) => r.stderr.split('\n').filter((l) => l.trim() !== '');

interface FindingJson {
  id: string;
  title: string;
  severity: string;
  health?: string;
  evidence: { text: string }[];
  remedy: string;
}

function findingsJson(file: string): { schema: string; findings: FindingJson[] } {
  const r = runCli(['findings', file, '--format', 'json']);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** kernels, nvtx, iterations, gaps: an empty result, one line saying why, exit 0. */
function expectEmptyResultsWithOneLine(file: string, noGpuWork: string): void {
  for (const cmd of [['kernels'], ['nvtx'], ['iterations'], ['iterations', '--summary'], ['gaps'], ['nvtx', '--gpu']]) {
    const r = runCli([...cmd, file, '--format', 'csv']);
    expect(r.status, `${cmd.join(' ')}: ${r.stderr}`).toBe(0);
    const lines = stderrLines(r);
    expect(lines, cmd.join(' ')).toHaveLength(1);
    if (cmd[0] === 'nvtx' && cmd.length === 1) expect(lines[0]).toBe('iterscope: NVTX was traced (-t nvtx) but no NVTX event was recorded: the program emits none (nsys: "No NVTX events collected. Does the process use NVTX?")');
    else expect(lines[0], cmd.join(' ')).toBe(`iterscope: no GPU work was recorded: ${noGpuWork}`);
    // Each table's header line, no row (gaps prints three tables, each under a `# title` line).
    const lines_ = r.stdout.trim().split('\n').filter((l) => l.trim() !== '');
    const titles = lines_.filter((l) => l.startsWith('# ')).length;
    expect(lines_.filter((l) => !l.startsWith('# ')), cmd.join(' ')).toHaveLength(Math.max(1, titles));
    expect(r.stderr).not.toContain('not an nsys export');
  }
}

/** summarize and compare: exit 2, one line naming the file, never a passing gate. */
function expectNothingToSummarizeOrCompare(file: string, noGpuWork: string): void {
  const s = runCli(['summarize', file]);
  expect(s.status).toBe(2);
  expect(s.stdout).toBe('');
  expect(stderrLines(s)).toEqual([`iterscope: ${file}: no GPU work was recorded, nothing to summarize: ${noGpuWork}`]);
  for (const [base, head] of [
    [fixture('cpp-legacy-windows', 'trace.2.sqlite'), file],
    [file, file],
  ]) {
    const c = runCli(['compare', base, head]);
    expect(c.status).toBe(2);
    expect(c.stdout).toBe('');
    expect(stderrLines(c)).toEqual([`iterscope: ${file}: no GPU work was recorded, nothing to compare: ${noGpuWork}`]);
  }
}

describe('health-crashed-client: a benchmark client that died at its first request', () => {
  const file = fixture('health-crashed-client', 'trace.sqlite');
  const facts = readFacts(file);
  const why = `pid ${facts.pid} python3 (\`${facts.command}\`) exited with \`${facts.stderrLastLine}\``;

  it('reads the export: the crashed program and its error line, read independently', () => {
    expect(facts.command).toBe('python3 /tmp/bench_client.py');
    expect(facts.stderrLastLine).toMatch(/^requests\.exceptions\.ConnectionError: HTTPConnectionPool\(host='localhost', port=8000\)/);
    expect(facts.warnings).toContain('No CUDA events collected. Does the process use CUDA?');
  });

  it('findings --format json: the first finding, severity high, says no GPU work was recorded and why (the error line)', () => {
    const r = findingsJson(file);
    expect(r.schema).toBe('iterscope.findings/1');
    const [first, second] = r.findings;
    expect(first.id).toBe('no-gpu-work');
    expect(first.severity).toBe('high');
    expect(first.health).toBe('blocking');
    expect(first.title.startsWith(`No GPU work was recorded: pid ${facts.pid} python3 (\`python3 /tmp/bench_client.py\`) exited with \`requests.exceptions.ConnectionError`)).toBe(true);
    const evidence = first.evidence.map((e) => e.text);
    expect(evidence).toContain(`stderr of pid ${facts.pid}: ${facts.stderrLastLine}`);
    expect(evidence).toContain(`pid ${facts.pid} python3 (\`${facts.command}\`): ${facts.cpuSamples} CPU samples, ${facts.schedEvents} scheduling events on 4 threads; no CUDA call; no NVTX event`);
    expect(evidence).toContain('nsys warning: "No CUDA events collected. Does the process use CUDA?"');
    expect(evidence.some((e) => e.startsWith('the profiled program looks like a client of an inference server'))).toBe(true);
    // The remedy: profile the server, for each engine, and how to keep a server running under nsys.
    expect(first.remedy).toMatch(/not the benchmark client/);
    for (const s of ['trtllm-serve', 'vllm serve', 'sglang.launch_server', '--trace-fork-before-exec=true', 'nsys launch']) expect(first.remedy).toContain(s);
    expect(second.id).toBe('program-crashed');
    expect(second.evidence[0].text).toBe(`pid ${facts.pid} exited with: ${facts.stderrLastLine}`);
    expect(second.remedy).toMatch(/^The client could not connect/);
    // Nothing recommends tracing more: CUDA and NVTX were traced, the program just never used them.
    expect(r.findings.map((f) => f.id)).toEqual(['no-gpu-work', 'program-crashed']);
  });

  it('report exits 0 and opens with that finding (Markdown and the HTML card); the coverage section lists nsys warnings', () => {
    const md = runCli(['report', file]);
    expect(md.status, md.stderr).toBe(0);
    const afterHeading = md.stdout.split('## Findings\n\n')[1];
    expect(afterHeading.startsWith(`1. **No GPU work was recorded: pid ${facts.pid} python3`)).toBe(true);
    expect(md.stdout).toContain('| GPU work | none: ');
    expect(md.stdout).toContain('- nsys warning: No CUDA events collected. Does the process use CUDA?');
    const html = runCli(['report', file, '--format', 'html']);
    expect(html.status, html.stderr).toBe(0);
    const firstCard = /<article class="finding sev-(\w+)" id="finding-([\w-]+)">\s*<h3><span class="finding-rank">1\.<\/span> ([^<]*)/.exec(html.stdout);
    expect(firstCard?.slice(1, 3)).toEqual(['high', 'no-gpu-work']);
    expect(firstCard![3]).toContain('No GPU work was recorded');
  });

  it('info: which program ran, that no CUDA, NVTX or OS event was recorded, and the end of its stderr', () => {
    const r = runCli(['info', file, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const h = JSON.parse(r.stdout).health;
    expect(h.command).toBe(facts.command);
    expect(h.noGpuWork).toBe(why);
    expect(h.crash.errorLine).toBe(facts.stderrLastLine);
    expect(h.recorded).toMatchObject({ kernels: false, memcpys: false, cudaCalls: false, nvtx: false, osrt: false, cpuSamples: true });
    expect(h.diagnostics.filter((d: { severity: string }) => d.severity === 'warning').map((d: { text: string }) => d.text)).toEqual(facts.warnings);
    expect(h.processes.map((p: { pid: number; cpuSamples: number; schedEvents: number }) => [p.pid, p.cpuSamples, p.schedEvents])).toEqual([[facts.pid, facts.cpuSamples, facts.schedEvents]]);
    const md = runCli(['info', file, '--format', 'md']).stdout;
    expect(md).toContain(`| GPU work | none: ${why.replace(/\|/g, '\\|')}`);
    expect(md).toContain('| recorded | CPU samples, scheduling; none of: kernels, memcpy, memset, whole-graph rows, CUDA API calls, NVTX, OS runtime |');
    expect(md).toContain(`| ${facts.pid} | stderr | 62 | ${facts.stderrLastLine} |`);
  });

  it('kernels, nvtx, iterations, gaps: the empty result and one line why, exit 0', () => expectEmptyResultsWithOneLine(file, why));

  it('summarize and compare: exit 2 with one line', () => expectNothingToSummarizeOrCompare(file, why));
});

describe('health-client-only: a client whose server ran outside the capture', () => {
  const file = fixture('health-client-only', 'trace.sqlite');
  const facts = readFacts(file);
  const why = `pid ${facts.pid} python3 (\`${facts.command}\`) made no CUDA call (nsys: "No CUDA events collected. Does the process use CUDA?")`;

  it('findings: the first finding names the profiled process, what it did, and nsys\'s "No CUDA events collected"', () => {
    expect(facts.stderrLastLine).toBeNull();
    const r = findingsJson(file);
    expect(r.findings.map((f) => f.id)).toEqual(['no-gpu-work']);
    const f = r.findings[0];
    expect(f.severity).toBe('high');
    expect(f.title).toBe(`No GPU work was recorded: ${why}`);
    const evidence = f.evidence.map((e) => e.text);
    expect(evidence).toContain(`pid ${facts.pid} python3 (\`${facts.command}\`): ${facts.cpuSamples} CPU samples, ${facts.schedEvents} scheduling events on 4 threads; no CUDA call; no NVTX event`);
    expect(evidence).toContain('traced: -t cuda,nvtx,cudnn,cublas --cuda-memory-usage=true (CUDA was traced: the program made no CUDA call)');
    expect(evidence).toContain(`stdout of pid ${facts.pid} (last line): ${facts.stdoutLastLine}`);
    expect(evidence).toContain(`stderr of pid ${facts.pid}: empty`);
  });

  it('report exits 0 and opens with it', () => {
    const md = runCli(['report', file]);
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout.split('## Findings\n\n')[1].startsWith(`1. **No GPU work was recorded: ${why.replace(/\|/g, '\\|')}**`)).toBe(true);
  });

  it('kernels, nvtx, iterations, gaps: the empty result and one line why, exit 0', () => expectEmptyResultsWithOneLine(file, why));

  it('summarize and compare: exit 2 with one line', () => expectNothingToSummarizeOrCompare(file, why));
});

describe('an export of a program that exited before any event: StringIds, ANALYSIS_FILE and ProcessStreams only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-health-min-'));
  const file = join(dir, 'minimal.sqlite');
  let lastLine: string;
  beforeAll(() => {
    copyFileSync(fixture('health-crashed-client', 'trace.sqlite'), file);
    chmodSync(file, 0o644);
    const db = new BetterSqlite3(file);
    for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]) {
      if (!['StringIds', 'ANALYSIS_FILE', 'ProcessStreams'].includes(name)) db.exec(`DROP TABLE "${name}"`);
    }
    db.close();
    lastLine = readFacts(fixture('health-crashed-client', 'trace.sqlite')).stderrLastLine!;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is read as an nsys export by info, report and findings, which print the end of the program\'s stderr', () => {
    for (const cmd of ['info', 'report', 'findings']) {
      const r = runCli([cmd, file, '--format', 'md']);
      expect(r.status, `${cmd}: ${r.stderr}`).toBe(0);
      expect(r.stderr).not.toContain('not an nsys export');
      expect(r.stdout, cmd).toContain(lastLine);
    }
  });
});

describe('pytorch-torch-trace/trace.json: a PyTorch profiler trace recorded under nsys (CPU ops only)', () => {
  const file = fixture('pytorch-torch-trace', 'trace.json');

  it('kernels converts only the kernels: its empty-result line claims nothing about the CPU ops it did not read', () => {
    const r = runCli(['kernels', file]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('the PyTorch profiler trace holds no kernel (this command reads only its kernels');
    expect(r.stderr).not.toMatch(/holds \d+ CPU ops/);
  });

  it('info reads the whole trace and counts its CPU ops (6,034 cpu_op events, fixtures README)', () => {
    const r = runCli(['info', file]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('the PyTorch profiler trace holds 6034 CPU ops and no kernel, memcpy or memset');
  });
});
