import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';
import { chromiumAvailable, CHROMIUM_SKIP_REASON, countColor, decodePng, dumpDom, inkShare, screenshot } from './chromium.js';

/** Screenshots and the pages they show stay here after the run (gitignored; CI keeps them as artifacts). */
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

const available = chromiumAvailable();
if (!available) console.warn(`[skip] HTML report browser tests: ${CHROMIUM_SKIP_REASON}`);

/** First two series colours of every chart (chartSpecs' palette). */
const BLUE = '#4e79a7';
const ORANGE = '#f28e2b';

describe.skipIf(!available)(`HTML report in headless Chromium${available ? '' : ` (skipped: ${CHROMIUM_SKIP_REASON})`}`, () => {
  let densePage: string;
  let metricsPage: string;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const dense = await runReport(fixture('pytorch-dense', 'trace.sqlite'), {
      log: [fixture('pytorch-dense', 'iteration_log.txt'), fixture('pytorch-dense', 'executor.log')],
      format: 'html',
    });
    densePage = join(ARTIFACTS, 'report-pytorch-dense.html');
    writeFileSync(densePage, dense.text);
    const metrics = await runReport(fixture('pytorch-gpu-metrics', 'trace.sqlite'), { log: [fixture('pytorch-gpu-metrics', 'iteration_log.txt')], format: 'html' });
    metricsPage = join(ARTIFACTS, 'report-pytorch-gpu-metrics.html');
    writeFileSync(metricsPage, metrics.text);
  });

  it('opens from a file:// URL with every chart in the DOM, drawn as SVG paths', () => {
    const dom = dumpDom(pathToFileURL(densePage).href);
    expect(dom).toContain('<h1>iterscope report: trace.sqlite</h1>');
    for (const id of ['gpu-time-by-category', 'idle-by-cause', 'idle-by-iteration']) {
      const fig = new RegExp(`<figure[^>]*id="chart-${id}"[\\s\\S]*?</figure>`).exec(dom);
      expect(fig, id).not.toBeNull();
      expect(fig![0]).toMatch(/<svg[^>]*>/);
      expect((fig![0].match(/<path /g) ?? []).length, id).toBeGreaterThan(20);
      expect(fig![0], id).toContain(`fill="${BLUE}"`);
    }
  });

  it('renders the charts: a screenshot with the series colours painted (test-artifacts/report-pytorch-dense.png)', () => {
    const png = join(ARTIFACTS, 'report-pytorch-dense.png');
    screenshot(pathToFileURL(densePage).href, png, 1280, 7000);
    const img = decodePng(png);
    expect(img.width).toBe(1280);
    expect(inkShare(img)).toBeGreaterThan(0.02);
    // Bars of the first two series of the GPU-time and idle charts are on screen.
    expect(countColor(img, BLUE)).toBeGreaterThan(500);
    expect(countColor(img, ORANGE)).toBeGreaterThan(500);
  });

  it('with GPU metrics, the SM/tensor activity chart sits right under the GPU-time chart (test-artifacts/report-pytorch-gpu-metrics.png)', () => {
    const dom = dumpDom(pathToFileURL(metricsPage).href);
    const ids = [...dom.matchAll(/<figure[^>]*id="chart-([a-z-]+)"/g)].map((m) => m[1]);
    expect(ids.slice(0, 2)).toEqual(['gpu-time-by-category', 'gpu-metrics']);
    const png = join(ARTIFACTS, 'report-pytorch-gpu-metrics.png');
    screenshot(pathToFileURL(metricsPage).href, png, 1280, 3000);
    expect(countColor(decodePng(png), BLUE)).toBeGreaterThan(500);
  });
});
