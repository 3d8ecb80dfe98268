/**
 * Progress reporting for long jobs: a one-line bar on stderr when it is a terminal, nothing when
 * piped (so cron logs stay clean), and a helper printing the `--json` summary object to stdout.
 */
import type { Writable } from 'node:stream';
import { writeText } from './writers.js';

/** Options of {@link ProgressReporter}. */
export interface ProgressOptions {
  /** Where the bar is drawn (stderr). */
  readonly stream: Writable;
  /** Draw at all; pass whether the stream is a TTY. When false every method is a no-op. */
  readonly enabled: boolean;
  /** Words before the bar, e.g. `expiring snapshots`. */
  readonly label: string;
  /** What is counted, e.g. `files` (default `items`). */
  readonly unit?: string;
  /** Expected count, when known; enables the bar and ETA. */
  readonly total?: number;
  /** Expected bytes, when known; the ETA then follows bytes rather than counts. */
  readonly totalBytes?: number;
  /** Minimum time between redraws (default 100 ms). */
  readonly minIntervalMs?: number;
  /** Clock in ms; injectable for tests. */
  readonly now?: () => number;
  /** Bar width in characters (default 24). */
  readonly barWidth?: number;
  /** Also show the rate (bytes/s when bytes are counted, else units/s) and the elapsed time: for jobs without a known total. */
  readonly showRate?: boolean;
}

/** A throttled single-line progress bar: `label [####----] 120/1000 files 12.0 MiB/45.0 MiB ETA 1m20s`. */
export class ProgressReporter {
  private done = 0;
  private bytes = 0;
  private total: number | undefined;
  private totalBytes: number | undefined;
  private readonly started: number;
  private lastDraw = -Infinity;
  private drawn = false;
  private readonly now: () => number;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.total = options.total;
    this.totalBytes = options.totalBytes;
  }

  /** Sets or corrects the expected totals (e.g. once listing has finished). */
  setTotal(total: number | undefined, totalBytes?: number): void {
    this.total = total;
    if (totalBytes !== undefined) this.totalBytes = totalBytes;
    this.maybeDraw();
  }

  /** Records `count` more items done and `bytes` more bytes processed. */
  add(count = 1, bytes = 0): void {
    this.done += count;
    this.bytes += bytes;
    this.maybeDraw();
  }

  /** Removes the bar, leaving the line free for the final message. */
  finish(): void {
    if (this.options.enabled && this.drawn) this.options.stream.write('\r\x1b[2K');
    this.drawn = false;
  }

  /** The current line, without control characters (exposed for tests and logs). */
  render(): string {
    const unit = this.options.unit ?? 'items';
    const parts = [this.options.label];
    const fraction = this.fraction();
    if (fraction !== undefined) {
      const width = this.options.barWidth ?? 24;
      const filled = Math.min(width, Math.floor(fraction * width));
      parts.push(`[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`);
    }
    parts.push(this.total !== undefined ? `${this.done}/${this.total} ${unit}` : `${this.done} ${unit}`);
    if (this.bytes > 0 || this.totalBytes !== undefined) {
      parts.push(this.totalBytes !== undefined ? `${formatBytes(this.bytes)}/${formatBytes(this.totalBytes)}` : formatBytes(this.bytes));
    }
    const elapsed = this.now() - this.started;
    if (this.options.showRate && elapsed > 0) {
      const perSecond = (n: number): number => (n * 1000) / elapsed;
      parts.push(this.bytes > 0 ? `${formatBytes(Math.round(perSecond(this.bytes)))}/s` : `${formatCount(perSecond(this.done))} ${unit}/s`);
      parts.push(formatDuration(elapsed));
    }
    if (fraction !== undefined && fraction > 0 && fraction < 1 && elapsed > 0) {
      parts.push(`ETA ${formatDuration((elapsed * (1 - fraction)) / fraction)}`);
    }
    return parts.join(' ');
  }

  private fraction(): number | undefined {
    if (this.totalBytes !== undefined && this.totalBytes > 0) return Math.min(1, this.bytes / this.totalBytes);
    if (this.total !== undefined && this.total > 0) return Math.min(1, this.done / this.total);
    return undefined;
  }

  private maybeDraw(): void {
    if (!this.options.enabled) return;
    const t = this.now();
    if (t - this.lastDraw < (this.options.minIntervalMs ?? 100)) return;
    this.lastDraw = t;
    this.drawn = true;
    this.options.stream.write(`\r\x1b[2K${this.render()}`);
  }
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** `1234.5` → `1.2k`, `12` → `12`: a rate short enough for a progress line. */
export function formatCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `80000` → `1m20s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/**
 * Prints the `--json` summary: exactly one JSON object and a newline. BigInts print as numbers
 * when they are exact as such, else as strings (the BIGINT rule of `read --format jsonl`).
 */
export async function writeJsonSummary(out: Writable, summary: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<void> {
  const text = JSON.stringify(summary, (_key, value: unknown) => {
    if (typeof value !== 'bigint') return value;
    return value >= -BigInt(Number.MAX_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  });
  await writeText(out, `${text}\n`, signal);
}
