import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { parseCsv } from '../helpers/csv.js';
import { fixture } from '../helpers/fixtures.js';

/** The commands as users run them (the built bundle): `layers`, and `iterations` with and without `--layers`. */
describe('layers on the command line (pytorch-dense)', () => {
  const file = fixture('pytorch-dense', 'trace.sqlite');

  it('`layers --format json` is the layer analysis: 8 layers in every step, inferred', () => {
    const r = runCli(['layers', file, '--format', 'json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.sources).toEqual({ period: 120 });
    expect(out.phases.map((p: { layerCount: number }) => p.layerCount)).toEqual([8, 8, 8]);
    expect(r.stderr).toMatch(/split by inference/);
  });

  it('`iterations --layers` adds a row per step with ns per layer; `iterations` alone prints what it did', () => {
    const plain = runCli(['iterations', file, '--format', 'json']);
    const withLayers = runCli(['iterations', file, '--layers', '--format', 'json']);
    expect(plain.status).toBe(0);
    expect(withLayers.status).toBe(0);
    const a = JSON.parse(plain.stdout);
    const b = JSON.parse(withLayers.stdout);
    expect(a.layers).toBeUndefined();
    expect(b.layers.steps).toHaveLength(a.iterations.length);
    const { layers, ...rest } = b;
    expect(layers).toBeDefined();
    expect(rest).toEqual(a);
    const csv = runCli(['iterations', file, '--layers', '--format', 'csv']);
    const text = csv.stdout;
    expect(text).toMatch(/L7 \(ns\)/);
    const rows = parseCsv(text.slice(text.indexOf('Iter,Phase,Layers from')));
    expect(rows.length).toBeGreaterThanOrEqual(120);
  });

  it('rejects an unknown --layer-source before reading the export (exit 2)', () => {
    const r = runCli(['layers', file, '--layer-source', 'markers']);
    expect(r.status).toBe(2);
  });
});
