// Progress of long work (eval episodes, replay publishing, training updates) on stderr, so stdout keeps
// the report or JSON a script reads. On a terminal one line is redrawn in place; in logs and CI (no TTY)
// a plain line is written every `intervalMs` and at the end, never carriage returns.

export interface ProgressState {
  readonly label: string;
  readonly done: number;
  /** Unknown totals show a count and a rate, no bar. */
  readonly total?: number;
  readonly unit: string;
  readonly elapsedMs: number;
  readonly detail?: string;
}

const BAR_WIDTH = 24;

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One progress line: label, bar and percentage (known total), count, rate, time left, detail. */
export function renderProgress(p: ProgressState): string {
  const rate = p.elapsedMs > 0 ? (p.done * 1000) / p.elapsedMs : 0;
  const rateText = rate >= 10 ? rate.toFixed(0) : rate.toFixed(rate >= 1 ? 1 : 2);
  const parts = [p.label];
  if (p.total !== undefined && p.total > 0) {
    const fraction = Math.min(1, Math.max(0, p.done / p.total));
    const filled = Math.round(fraction * BAR_WIDTH);
    parts.push(`[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`, `${(fraction * 100).toFixed(0).padStart(3)}%`, `${p.done}/${p.total} ${p.unit}`);
    parts.push(`${rateText} ${p.unit}/s`);
    if (p.done > 0 && p.done < p.total) parts.push(`eta ${duration(((p.total - p.done) / rate) * 1000)}`);
    else parts.push(`${duration(p.elapsedMs)}`);
  } else {
    parts.push(`${p.done} ${p.unit}`, `${rateText} ${p.unit}/s`, duration(p.elapsedMs));
  }
  if (p.detail) parts.push(p.detail);
  return parts.join('  ');
}

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressOptions {
  readonly label: string;
  readonly total?: number;
  readonly unit: string;
  readonly stream?: ProgressStream;
  readonly now?: () => number;
  /** Without a terminal: at most one line per interval (default 10 s). */
  readonly intervalMs?: number;
}

export interface ProgressBar {
  /** Adds `n` done units. */
  tick(n?: number, detail?: string): void;
  /** Sets the done count (e.g. from a remote counter). */
  set(done: number, detail?: string): void;
  /** Writes a log line without tearing the bar (the bar is redrawn under it). */
  log(line: string): void;
  /** Final line; later calls do nothing. */
  finish(detail?: string): void;
}

/** Whether a non-forced redraw at `t` is due: the last one is at least `intervalMs` old. */
export function drawDue(lastDraw: number, t: number, intervalMs: number): boolean {
  return t - lastDraw >= intervalMs;
}

/** Cuts a line one short of the terminal width, so it never wraps. */
function clip(text: string, columns: number | undefined): string {
  return columns && text.length >= columns ? text.slice(0, columns - 1) : text;
}

/** Where progress lines go: redrawn in place on a terminal, appended as plain lines otherwise. */
interface ProgressScreen {
  draw(line: () => string, force: boolean): void;
  clear(): void;
  end(): void;
}

function progressScreen(stream: ProgressStream, now: () => number, interval: number): ProgressScreen {
  const tty = stream.isTTY === true;
  let lastDraw = -Infinity;
  let shown = false;
  return {
    draw(line, force) {
      const t = now();
      if (!force && !drawDue(lastDraw, t, interval)) return;
      lastDraw = t;
      if (tty) {
        stream.write(`\r\x1b[2K${clip(line(), stream.columns)}`);
        shown = true;
      } else {
        stream.write(`${line()}\n`);
      }
    },
    clear() {
      if (tty && shown) stream.write('\r\x1b[2K');
      shown = false;
    },
    end() {
      if (tty) stream.write('\n');
    },
  };
}

export function progressBar(options: ProgressOptions): ProgressBar {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const tty = stream.isTTY === true;
  const screen = progressScreen(stream, now, options.intervalMs ?? (tty ? 100 : 10_000));
  const started = now();
  let done = 0;
  let detail: string | undefined;
  let finished = false;

  const line = () =>
    renderProgress({
      label: options.label,
      done,
      unit: options.unit,
      elapsedMs: now() - started,
      ...(options.total === undefined ? {} : { total: options.total }),
      ...(detail === undefined ? {} : { detail }),
    });
  const advance = (value: number, d: string | undefined) => {
    if (finished) return;
    done = value;
    if (d !== undefined) detail = d;
    screen.draw(line, false);
  };
  // The first line waits for the first progress (a quick job may never show one without a terminal).
  return {
    tick: (n = 1, d) => advance(done + n, d),
    set: (value, d) => advance(value, d),
    log(text) {
      screen.clear();
      stream.write(`${text}\n`);
      if (tty && !finished && done > 0) screen.draw(line, true);
    },
    finish(d) {
      if (finished) return;
      if (d !== undefined) detail = d;
      screen.draw(line, true);
      screen.end();
      finished = true;
    },
  };
}
