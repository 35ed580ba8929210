/**
 * A one-line progress bar on stderr for long work, drawn only when stderr is a terminal (nothing
 * in CI logs, pipes or files) and at most every 100 ms. stdout is never touched.
 *
 *   const p = progress('analysing exports', files.length);
 *   p.tick(); ... p.done();
 */
export interface Progress {
  /** Adds `n` (default 1) units of work done; `label` replaces the text after the counter. */
  tick(n?: number, label?: string): void;
  /** Sets the absolute amount done (and the total, when it is only known as the work goes). */
  update(done: number, label?: string, total?: number): void;
  /** Clears the line (call once, also on errors: `try { ... } finally { p.done() }`). */
  done(): void;
  readonly enabled: boolean;
}

export interface ProgressOptions {
  /** Where to draw (default process.stderr). Drawing needs `isTTY`. */
  stream?: NodeJS.WriteStream;
  /** Force on or off (default: stream.isTTY, and off when CI is set). */
  enabled?: boolean;
  /** Minimum ms between redraws (default 100). */
  intervalMs?: number;
  /** Unit printed after the counter, e.g. 'exports', 'rows'. */
  unit?: string;
}

const WIDTH = 24;

export function progress(title: string, initialTotal: number, opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const enabled = opts.enabled ?? (stream.isTTY === true && !process.env.CI);
  const interval = opts.intervalMs ?? 100;
  let done = 0;
  let label = '';
  let total = initialTotal;
  let last = 0;
  let drawn = false;
  const draw = (force = false) => {
    if (!enabled) return;
    const now = Date.now();
    if (!force && now - last < interval) return;
    last = now;
    const frac = total > 0 ? Math.min(1, done / total) : 0;
    const fill = Math.round(frac * WIDTH);
    const cols = (stream.columns ?? 80) - 1;
    let line = `${title} [${'#'.repeat(fill)}${'.'.repeat(WIDTH - fill)}] ${done}/${total}${opts.unit ? ` ${opts.unit}` : ''}${label ? ` ${label}` : ''}`;
    if (line.length > cols) line = line.slice(0, cols);
    stream.write(`\r${line}\x1b[K`);
    drawn = true;
  };
  return {
    enabled,
    tick(n = 1, l?: string) {
      done += n;
      if (l !== undefined) label = l;
      draw(done >= total);
    },
    update(d: number, l?: string, t?: number) {
      done = d;
      if (l !== undefined) label = l;
      if (t !== undefined) total = t;
      draw(done >= total);
    },
    done() {
      if (enabled && drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
