/**
 * Issue 57: the HTML report in a real browser, driven through playwright-core (which downloads no
 * browser) over the system's Chromium: the iterations chart fills the first screen, hovering an
 * iteration shows its batch, a finding's iteration opens its timeline, the keys and the wheel zoom
 * and pan, and nothing is logged as an error. Without Chromium the tests say so and skip; in CI
 * (`CI` set, where `.ci/run` installs it) a missing browser fails instead.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import { PALETTE } from '../../reports/html/chartSpecs.js';
import { gpuTimeByCategoryChart } from '../../reports/document/charts.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { captured, hasCaptured } from '../helpers/captured.js';
import { CHROMIUM, chromiumAvailable, CHROMIUM_SKIP_REASON, countColor, decodePng } from './chromium.js';

const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const SAMPLE = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const LOGS = [join(REPO_ROOT, 'sample-data', 'moe-iteration_log.txt'), join(REPO_ROOT, 'sample-data', 'moe-executor.log')];
/** The first screen the acceptance names. */
const VIEWPORT = { width: 1400, height: 900 };

const available = chromiumAvailable();
if (!available && !process.env.CI) console.warn(`[skip] HTML report browser (playwright) tests: ${CHROMIUM_SKIP_REASON}`);

describe('the browser test runs in CI', () => {
  it.runIf(!!process.env.CI)('finds Chromium', () => {
    expect(available, CHROMIUM_SKIP_REASON).toBe(true);
  });
});

describe.skipIf(!available)(`sample report in headless Chromium via playwright-core${available ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`, () => {
  let data: ReportData;
  let ctx: BrowserContext;
  let page: Page;
  let profile: string;
  const errors: string[] = [];
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const r = await runReport(SAMPLE, { log: LOGS, format: 'html' });
    data = r.data;
    const file = join(ARTIFACTS, 'report-sample.html');
    writeFileSync(file, r.text);
    profile = mkdtempSync(join(tmpdir(), 'iterscope-playwright-'));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: VIEWPORT,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  }, 120_000);
  afterAll(async () => {
    await ctx?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('shows the iterations chart in the first 1400x900 viewport (test-artifacts/report-sample-first-screen.png)', async () => {
    const svg = await page.locator('#overview-chart svg').boundingBox();
    expect(svg).not.toBeNull();
    expect(svg!.y).toBeGreaterThanOrEqual(0);
    expect(svg!.y + svg!.height).toBeLessThanOrEqual(VIEWPORT.height);
    expect(await page.locator('#overview-chart g.it').count()).toBe(data.iterations!.iterations.length);
    const png = join(ARTIFACTS, 'report-sample-first-screen.png');
    await page.screenshot({ path: png });
    const img = decodePng(png);
    expect([img.width, img.height]).toEqual([VIEWPORT.width, VIEWPORT.height]);
    // The stacked bars are painted: the colours of the series with the most GPU time.
    const series = gpuTimeByCategoryChart(data.iterations!).series;
    const colourOf = (s: string) => PALETTE[series.indexOf(s)];
    expect(countColor(img, colourOf('gemm'))).toBeGreaterThan(2000);
    expect(countColor(img, colourOf('elementwise'))).toBeGreaterThan(1000);
  });

  it("hovering an iteration shows its batch (the iteration's counts in the report data)", async () => {
    for (const r of [data.iterations!.iterations[3], data.iterations!.iterations[7]]) {
      await page.locator(`#overview-chart g.it[data-iter="${r.iter}"] rect.hit`).hover();
      const tip = page.locator('#overview-tip');
      expect(await tip.isVisible()).toBe(true);
      const lines = (await tip.innerText()).split('\n');
      expect(lines[0]).toBe(`iteration ${r.iter} (${r.phase})`);
      const gen = `gen ${r.generationRequests} req${r.generationTokens == null ? '' : ` / ${r.generationTokens} tok`}`;
      expect(lines[1]).toBe(`ctx ${r.contextRequests} req / ${r.contextTokens} tok · ${gen}`);
    }
  });

  it("clicking a finding's iteration opens that iteration's timeline", async () => {
    const root = page.locator('[data-timeline]');
    const links = page.locator('.finding-iters a[data-open-step]');
    expect(await links.count()).toBeGreaterThan(0);
    // One that is not the step shown first, so opening it is seen.
    const shown = await root.getAttribute('data-iter');
    const iters = await links.evaluateAll((as) => as.map((a) => a.getAttribute('data-open-step')));
    const target = iters.find((i) => i !== shown)!;
    expect(target).toBeDefined();
    await links.nth(iters.indexOf(target)).click();
    expect(await root.getAttribute('data-iter')).toBe(target);
    expect(await page.locator(`button.step[data-iter="${target}"]`).getAttribute('aria-pressed')).toBe('true');
    const box = await root.boundingBox();
    expect(box!.y).toBeLessThan(VIEWPORT.height);
    expect(box!.y + 40).toBeGreaterThan(0);
  });

  it('W/S zoom, A/D pan and Ctrl+wheel zoom change the visible span', async () => {
    const root = page.locator('[data-timeline]');
    const view = async () => [Number(await root.getAttribute('data-view-start')), Number(await root.getAttribute('data-view-end'))];
    await root.focus();
    await page.keyboard.press('0');
    const [s0, e0] = await view();
    expect(s0).toBe(0);
    await page.keyboard.press('w');
    const [s1, e1] = await view();
    expect(e1 - s1).toBeCloseTo((e0 - s0) * 0.8, -1);
    await page.keyboard.press('d');
    const [s2, e2] = await view();
    expect(s2).toBeGreaterThan(s1);
    expect(e2 - s2).toBeCloseTo(e1 - s1, -1);
    await page.keyboard.press('a');
    expect((await view())[0]).toBeLessThan(s2);
    await page.keyboard.press('s');
    await page.keyboard.press('s');
    const [s3, e3] = await view();
    expect(e3 - s3).toBeGreaterThan(e1 - s1);
    const canvas = await page.locator('[data-timeline] canvas').boundingBox();
    await page.mouse.move(canvas!.x + canvas!.width / 2, canvas!.y + 10);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -300);
    await page.keyboard.up('Control');
    const [s4, e4] = await view();
    expect(e4 - s4).toBeLessThan(e3 - s3);
  });

  it("hovering a kernel names it and its launch (the launch-to-kernel link's tip)", async () => {
    const root = page.locator('[data-timeline]');
    await root.focus();
    await page.keyboard.press('0');
    const box = (await page.locator('[data-timeline] canvas').boundingBox())!;
    const tip = page.locator('[data-timeline] [data-role=tip]');
    let text = '';
    // Down the canvas at a few x positions until the pointer is over a kernel of a stream lane.
    search: for (const fx of [0.3, 0.5, 0.7, 0.9]) {
      for (let y = 24; y < box.height; y += 3) {
        await page.mouse.move(box.x + box.width * fx, box.y + y);
        if ((await tip.isVisible()) && (text = await tip.innerText()).includes('launched by thread')) break search;
      }
    }
    expect(text).toMatch(/\nlaunched by thread \d+ at \+[\d.]+ (ns|us|ms|s), started [\d.]+ (ns|us|ms|s) after its launch$/);
  });

  it('logs no console error', () => {
    expect(errors).toEqual([]);
  });
});

const DETAILED = hasCaptured('vllm-detailed') && hasCaptured('vllm-detailed', 'vllm.log');

/**
 * `report --format html --layers` (issue 57): an opened step's timeline has a lane per GPU with a span
 * per pass of each decoder layer and per run of kernels outside layers, the note says how the layers
 * were found, and hovering a span gives its layer, pass and module kinds' time.
 */
describe.skipIf(!available || !DETAILED)(`the step timeline with --layers in headless Chromium${available ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`, () => {
  it('vllm-detailed: opening iteration 30 (a prefill run twice) shows its 16 layer passes on GPU 0 (test-artifacts/report-layers-timeline.png), no console error', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const r = await runReport(captured('vllm-detailed', 'trace.sqlite'), { log: [captured('vllm-detailed', 'vllm.log')], format: 'html', layers: true });
    const file = join(ARTIFACTS, 'report-layers.html');
    writeFileSync(file, r.text);
    const steps = r.data.stepTimeline!.steps;
    const at = steps.findIndex((s) => s.iter === 30);
    expect(at).toBeGreaterThan(0);
    const step = steps[at];
    const split = r.data.layers!.steps.find((s) => s.iter === 30 && s.pid === step.pid)!;
    const passes = split.layers.reduce((n, f) => n + f.passes, 0);
    expect(passes).toBe(16);
    const { errors } = await withPage(file, async (page) => {
      await page.locator(`button.step[data-step="${at}"]`).click();
      const root = page.locator('[data-timeline]');
      expect(await root.getAttribute('data-iter')).toBe('30');
      expect(await root.getAttribute('data-layer-lanes')).toBe('1');
      expect(await root.getAttribute('data-layer-spans')).toBe(String(passes));
      expect(await root.getAttribute('data-outside-spans')).toBe(String(step.layers!.spans.filter((x) => x.layer === null).length));
      expect(await root.locator('[data-role=layers]').innerText()).toBe(
        'Layers of iteration 30: 8 layers, 16 passes; inferred by period (no layer marker): 46 kernels a layer, 8 layers x 2 runs, fit 98.6% of its kernels.',
      );
      // The longest second pass of a layer, hovered at its middle on the layer lane.
      const span = step.layers!.spans.filter((x) => x.pass === 2).sort((a, b) => b.endNs - b.startNs - (a.endNs - a.startNs))[0];
      const box = (await page.locator('[data-timeline] canvas').boundingBox())!;
      const [v0, v1] = [Number(await root.getAttribute('data-view-start')), Number(await root.getAttribute('data-view-end'))];
      const t = (span.startNs + span.endNs) / 2 - step.viewStartNs;
      const label = 170;
      const x = box.x + label + ((t - v0) / (v1 - v0)) * (box.width - label);
      await page.mouse.move(x, box.y + Number(await root.getAttribute('data-layer-lane-y')) + 8);
      const tip = page.locator('[data-timeline] [data-role=tip]');
      expect(await tip.isVisible()).toBe(true);
      const lines = (await tip.innerText()).split('\n');
      expect(lines[0]).toMatch(new RegExp(`^layer ${span.layer} \\(pass 2\\) · [\\d.]+ (us|ms)$`));
      expect(lines[1]).toMatch(new RegExp(`^${span.kernelCount} kernels, [\\d.]+ (us|ms) kernel time$`));
      expect(lines[2].split(' · ').length).toBe(Object.keys(span.kindNs).length);
      await page.screenshot({ path: join(ARTIFACTS, 'report-layers-timeline.png'), fullPage: false });
    });
    expect(errors).toEqual([]);
  }, 120_000);
});

/**
 * Opens a page written by the CLI in the 1400x900 viewport: its first chart's box, the verdicts of
 * the compare chart's rows (none elsewhere), and every console error; saves the screenshot.
 */
async function openFirstScreen(html: string, png: string): Promise<{ box: { y: number; height: number } | null; verdicts: string[]; errors: string[] }> {
  const { result, errors } = await withPage(html, async (page) => {
    const box = await page.locator('figure.chart svg').first().boundingBox();
    const verdicts = await page.locator('figure.chart svg g.metric-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-verdict') ?? ''));
    await page.screenshot({ path: png });
    return { box, verdicts };
  });
  return { ...result, errors };
}

/** Opens `html` in a fresh headless Chromium profile (1400x900), runs `use` on the loaded page, and gives every console error and page error it logged. */
async function withPage<T>(html: string, use: (page: Page) => Promise<T>): Promise<{ result: T; errors: string[] }> {
  const profile = mkdtempSync(join(tmpdir(), 'iterscope-playwright-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, viewport: VIEWPORT, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  const errors: string[] = [];
  try {
    const page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    return { result: await use(page), errors };
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

describe.skipIf(!available)('the engines page opens with its chart in the first viewport', () => {
  it('shows the first chart within 1400x900 (test-artifacts/engines-first-screen.png), no console error', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const out = join(ARTIFACTS, 'engines.html');
    const args = [fixture('fieldguide-vllm', 'trace.sqlite'), fixture('plain-fieldguide', 'trace.sqlite'), '--log', fixture('fieldguide-vllm', 'vllm.log'), '--benchmark', fixture('plain-fieldguide', 'benchmark_results.json')];
    const r = runCli(['engines', ...args, '-o', out]);
    expect(r.status, r.stderr).toBe(0);
    const { box, errors } = await openFirstScreen(out, join(ARTIFACTS, 'engines-first-screen.png'));
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(VIEWPORT.height);
    expect(errors).toEqual([]);
  }, 120_000);
});

const GATE = hasCaptured('gate', 'vllm-a/trace.sqlite');

describe.skipIf(!available || !GATE)('the compare page opens with its chart of changes in the first viewport', () => {
  it('vLLM-style a vs slow: the chart within 1400x900, the two regressions its first rows (test-artifacts/compare-first-screen.png), no console error', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const out = join(ARTIFACTS, 'compare.html');
    const at = (run: string, file: string) => captured('gate', run, file);
    const r = runCli(['compare', at('vllm-a', 'trace.sqlite'), at('vllm-slow', 'trace.sqlite'), '--base-log', at('vllm-a', 'vllm.log'), '--head-log', at('vllm-slow', 'vllm.log'), '-o', out]);
    expect(r.status, r.stderr).toBe(1); // the gate's exit code, with the page written
    const { box, verdicts, errors } = await openFirstScreen(out, join(ARTIFACTS, 'compare-first-screen.png'));
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(VIEWPORT.height);
    expect(verdicts.slice(0, 3)).toEqual(['regressed', 'regressed', 'inconclusive']);
    expect(errors).toEqual([]);
  }, 120_000);
});
