/**
 * Issue 57: the step timeline puts kernel and NVTX range names of the export into the page, as
 * JSON inside a `<script type="application/json">` element the page script reads. Names that try
 * to close that element, open a script or an element with a handler stay text: the page has its
 * two scripts and no other, the JSON gives the names back as they are in the export, and (where
 * Chromium is installed) the page runs no injected code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { CHROMIUM, chromiumAvailable } from './chromium.js';

const SAMPLE = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const KERNEL_TAIL = '</script><script>window.__pwned = 1</script><!--';
const RANGE_TAIL = '<img src=x onerror="window.__pwned = 2">\u2028';

describe('hostile kernel and range names in the step timeline', () => {
  let dir: string;
  let html: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-timeline-'));
    const file = editExport(copyExport(SAMPLE, join(dir, 'hostile.sqlite')), (db) => {
      db.prepare(`UPDATE StringIds SET value = value || ? WHERE id IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)`).run(KERNEL_TAIL);
      db.prepare(`UPDATE StringIds SET value = value || ? WHERE value IN ('_schedule', '_prepare_inputs', '_sample_async', '_update_requests')`).run(RANGE_TAIL);
    });
    html = (await runReport(file, { format: 'html' })).text;
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps them text: two scripts, the names back unchanged from the JSON', () => {
    expect((html.match(/<script/gi) ?? []).length).toBe(2);
    expect(html).not.toContain('<img');
    const json = /<script type="application\/json" id="timeline-data">([\s\S]*?)<\/script>/.exec(html)![1];
    expect(json).not.toMatch(/[<\u2028]/);
    const names = (JSON.parse(json) as { names: string[] }).names;
    expect(names.filter((n) => n.endsWith(KERNEL_TAIL)).length).toBeGreaterThan(10);
    expect(names.filter((n) => n.endsWith(RANGE_TAIL)).length).toBeGreaterThan(0);
  });

  it.skipIf(!chromiumAvailable())('runs none of them in Chromium', async () => {
    const page = join(dir, 'hostile.html');
    writeFileSync(page, html);
    const profile = mkdtempSync(join(tmpdir(), 'iterscope-playwright-'));
    const ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    try {
      const p = await ctx.newPage();
      await p.goto(pathToFileURL(page).href, { waitUntil: 'load' });
      expect(await p.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      // The page script ran (the timeline drew its first step).
      expect(await p.locator('[data-timeline]').getAttribute('data-view-end')).toMatch(/^\d+$/);
    } finally {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
