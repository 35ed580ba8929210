import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

/**
 * Headless Debian Chromium for browser tests, driven through its command line (`--screenshot`,
 * `--dump-dom`): no test-tool browser download, no extra npm package.
 */

/** The browser: `CHROMIUM` from the environment, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/** Why the browser tests are skipped, for the test name and the log. */
export const CHROMIUM_SKIP_REASON = `${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the headless-browser tests`;

/**
 * Flags for a closed network and a root user: no sandbox, no GPU, no background fetches (their
 * refused connections would slow the start), a fresh profile every run.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
  '--mute-audio',
];

function runChromium(args: string[], timeoutMs = 60_000): string {
  const profile = mkdtempSync(join(tmpdir(), 'iterscope-chromium-'));
  try {
    const r = spawnSync(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`chromium exited with ${r.status}: ${r.stderr.slice(-2000)}`);
    return r.stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** The DOM after the page loaded, serialized. */
export function dumpDom(url: string): string {
  return runChromium(['--dump-dom', url]);
}

/** Screenshot of the top `height` px of the page at `width` px wide, written to `outPng`. */
export function screenshot(url: string, outPng: string, width = 1280, height = 2000): void {
  runChromium([`--window-size=${width},${height}`, `--screenshot=${outPng}`, url]);
  if (!existsSync(outPng)) throw new Error(`chromium wrote no screenshot to ${outPng}`);
}

export interface Rgba {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. */
  pixels: Uint8Array;
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) to RGBA pixels. */
export function decodePng(path: string): Rgba {
  const buf = readFileSync(path);
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error(`${path}: not a PNG`);
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const color = data[9];
      if (depth !== 8 || data[12] !== 0 || (color !== 2 && color !== 6)) throw new Error(`${path}: unsupported PNG (depth ${depth}, color type ${color}, interlace ${data[12]})`);
      channels = color === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? cur[x - channels] : 0;
      const b = prev[x];
      const c = x >= channels ? prev[x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[x] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = cur[x * channels];
      out[o + 1] = cur[x * channels + 1];
      out[o + 2] = cur[x * channels + 2];
      out[o + 3] = channels === 4 ? cur[x * channels + 3] : 255;
    }
    prev = cur;
  }
  return { width, height, pixels: out };
}

/** Pixels of exactly this colour (`#rrggbb`). */
export function countColor(img: Rgba, hex: string): number {
  const r = parseInt(hex.slice(1, 3), 16);
  const g = parseInt(hex.slice(3, 5), 16);
  const b = parseInt(hex.slice(5, 7), 16);
  let n = 0;
  for (let i = 0; i < img.pixels.length; i += 4) if (img.pixels[i] === r && img.pixels[i + 1] === g && img.pixels[i + 2] === b) n++;
  return n;
}

/** Share of pixels that are not (near) white. */
export function inkShare(img: Rgba): number {
  let n = 0;
  for (let i = 0; i < img.pixels.length; i += 4) if (img.pixels[i] < 240 || img.pixels[i + 1] < 240 || img.pixels[i + 2] < 240) n++;
  return n / (img.width * img.height);
}
