/**
 * The terminal picture of a table report: a compact summary with unicode bars and sparklines that
 * fits 100 columns. Colour (ANSI) only when asked for, i.e. when stdout is a terminal.
 */
import type { JobNotPlanned, PartitionReport, TableReport, TimelineSnapshot } from '@tidemark/maintenance';
import { formatBytes, formatDuration } from '../output/progress.js';
import { bucketsText, counted as plural, formatCount, liveRowsText, nothingToMergeText } from './inspect-words.js';

/** Widest line the summary prints. */
export const INSPECT_TEXT_WIDTH = 100;

const SPARKS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'] as const;
/** One letter per commit kind on the kinds strip. */
const KIND_LETTER: Readonly<Record<string, string>> = { APPEND: 'A', COMPACT: 'C', OVERWRITE: 'O', ANALYZE: 'Z' };
/** Columns the labels take before sparklines and bars. */
const LABEL = 16;
const SPARK_WIDTH = INSPECT_TEXT_WIDTH - LABEL - 2 - 16;

type Paint = (text: string) => string;
interface Palette {
  readonly bold: Paint;
  readonly dim: Paint;
  readonly bar: Paint;
  readonly warn: Paint;
}

const plain: Palette = { bold: (t) => t, dim: (t) => t, bar: (t) => t, warn: (t) => t };
const ansi =
  (open: string): Paint =>
  (t) =>
    `\x1b[${open}m${t}\x1b[0m`;
const coloured: Palette = { bold: ansi('1'), dim: ansi('2'), bar: ansi('36'), warn: ansi('33') };

/**
 * A sparkline of `values`, one character each. Zero draws the lowest block and any other value at
 * least the second, so "nothing" and "a little" stay apart; the maximum draws the full block.
 */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 || v <= 0 ? SPARKS[0] : SPARKS[1 + Math.min(6, Math.floor((v / max) * 6.999))])).join('');
}

/** A horizontal bar `width` columns wide at most, in eighths of a column. */
export function bar(value: number, max: number, width: number): string {
  if (max <= 0 || value <= 0) return '';
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
}

/** Cuts `text` to `width` columns, marking the cut with `…` (in the middle for paths). */
function fit(text: string, width: number, middle = false): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (!middle) return chars.slice(0, width - 1).join('') + '…';
  const head = Math.floor((width - 1) / 2);
  return chars.slice(0, head).join('') + '…' + chars.slice(chars.length - (width - 1 - head)).join('');
}

function pad(text: string, width: number): string {
  const n = [...text].length;
  return n >= width ? text : text + ' '.repeat(width - n);
}

/** Groups the timeline into at most `width` columns (sums per column), so long histories fit. */
function columns(snapshots: readonly TimelineSnapshot[], width: number): TimelineSnapshot[][] {
  const n = snapshots.length;
  const cols = Math.min(n, width);
  const out: TimelineSnapshot[][] = [];
  for (let c = 0; c < cols; c++) out.push(snapshots.slice(Math.floor((c * n) / cols), Math.floor(((c + 1) * n) / cols)));
  return out;
}

/** The kind shown for a column holding several commits: the rarest kind wins over APPEND. */
function columnKind(group: readonly TimelineSnapshot[]): string {
  for (const k of ['OVERWRITE', 'COMPACT', 'ANALYZE']) if (group.some((s) => s.kind === k)) return KIND_LETTER[k]!;
  return 'A';
}

/** Bin label: `< 2.0 KiB`, …, `≥ 32.0 KiB`. */
function binLabel(min: number, max: number | null): string {
  // Bins are contiguous, so the upper edge names each one; the last is open-ended.
  return max === null ? `≥ ${formatBytes(min)}` : `< ${formatBytes(max)}`;
}

function partitionLabel(p: PartitionReport | { path: string }): string {
  return p.path === '' ? '(unpartitioned)' : p.path.replace(/\/$/, '');
}

function isPlanned<T extends { status: string }>(job: T | JobNotPlanned): job is T {
  return job.status === 'planned';
}

/**
 * Renders `report` as the terminal summary.
 *
 * @param colour - emit ANSI colours (only for a terminal; never when output is piped).
 */
export function renderInspectText(report: TableReport, colour = false): string {
  const c = colour ? coloured : plain;
  const lines: string[] = [];
  const line = (label: string, text: string): void => void lines.push(`${c.bold(pad(label, LABEL))}${text}`);
  const sub = (label: string, text: string): void => void lines.push(`  ${c.dim(pad(label, LABEL - 2))}${text}`);

  // ---- the table ----
  line('table', fit(report.table, INSPECT_TEXT_WIDTH - LABEL, true));
  const kind = report.primaryKeys.length > 0 ? `primary-key table (${report.primaryKeys.join(', ')})` : 'append table';
  const parts = report.partitionKeys.length > 0 ? `partitioned by ${report.partitionKeys.join(', ')}` : 'unpartitioned';
  line('', fit(`${kind}, ${parts}, bucket ${report.bucket}, schema ${report.schemaId}`, INSPECT_TEXT_WIDTH - LABEL));

  // ---- timeline ----
  const t = report.timeline;
  if (t.retained === 0) {
    line('snapshots', 'none yet');
  } else {
    const shown = t.snapshots;
    const first = shown[0];
    const last = shown[shown.length - 1];
    const span =
      first && last
        ? `, ${first.timeMillis === last.timeMillis ? iso(first.timeMillis) : `${iso(first.timeMillis)} … ${iso(last.timeMillis)}`}`
        : '';
    line(
      'snapshots',
      fit(`${formatCount(t.retained)} retained (#${t.earliestSnapshotId} … #${t.latestSnapshotId})${span}`, INSPECT_TEXT_WIDTH - LABEL),
    );
    if (t.omitted > 0) sub('', c.dim(`timeline shows the newest ${formatCount(shown.length)}; ${formatCount(t.omitted)} older not read`));
    const kinds = Object.entries(t.byKind)
      .map(([k, n]) => `${k} ${formatCount(n)}`)
      .join(' · ');
    sub('kinds', fit(kinds, INSPECT_TEXT_WIDTH - LABEL));
    const cols = columns(shown, SPARK_WIDTH);
    const per = cols.length < shown.length ? c.dim(` (${Math.ceil(shown.length / cols.length)} per column)`) : '';
    sub('commits', `${cols.map(columnKind).join('')}${per}`);
    const added = cols.map((g) => g.reduce((s, x) => s + x.rowsAdded, 0));
    const removed = cols.map((g) => g.reduce((s, x) => s + x.rowsRemoved, 0));
    sub('rows added', `${c.bar(sparkline(added))} max ${formatCount(Math.max(0, ...added))}`);
    sub('rows removed', `${c.bar(sparkline(removed))} max ${formatCount(Math.max(0, ...removed))}`);
  }
  if (report.tags.length > 0) {
    const tags = report.tags.map((x) => `${x.name}→#${x.snapshotId}`).join(', ');
    sub('tags', fit(`${report.tags.length}: ${tags}`, INSPECT_TEXT_WIDTH - LABEL));
  }

  // ---- live data ----
  const live = report.liveFiles;
  line(
    'live data',
    `${plural(live.files, 'file')} · ${formatBytes(live.bytes)} · ${liveRowsText(report)} · ` +
      `${plural(live.partitions, 'partition')} · ${bucketsText(report)}`,
  );
  const levels = Object.entries(live.levels);
  if (report.primaryKeys.length > 0 && levels.length > 0) sub('levels', levels.map(([l, n]) => `L${l}: ${formatCount(n)}`).join('  '));

  // ---- file sizes ----
  const fs = report.fileSizes;
  line(
    'file sizes',
    `target-file-size ${formatBytes(fs.targetFileSize)}; ` +
      (fs.smallFiles > 0
        ? c.warn(`${plural(fs.smallFiles, 'file')} below ${formatBytes(Math.round(fs.smallFileBytes))}`)
        : 'no small files'),
  );
  const maxBin = Math.max(0, ...fs.histogram);
  const barWidth = INSPECT_TEXT_WIDTH - LABEL - 2 - 10;
  fs.bins.forEach((b, i) => {
    const n = fs.histogram[i] ?? 0;
    // Labels give upper edges, so the target is marked on the last bin below it.
    const target = fs.bins[i + 1]?.minFraction === 1 ? c.dim(' ← target-file-size') : '';
    sub(fit(binLabel(b.minBytes, b.maxBytes), LABEL - 3), `${c.bar(bar(n, maxBin, barWidth))} ${formatCount(n)}${target}`);
  });

  // ---- partitions ----
  if (report.largestPartitions.length > 0 && report.partitionKeys.length > 0) {
    line('partitions', `largest ${report.largestPartitions.length} of ${formatCount(live.partitions)} by bytes`);
    const maxBytes = Math.max(0, ...report.largestPartitions.map((p) => p.bytes));
    const nameWidth = 26;
    const figures = report.largestPartitions.map(
      (p) => `${formatBytes(p.bytes)} ${plural(p.files, 'file')}${p.smallFiles > 0 ? ` (${formatCount(p.smallFiles)} small)` : ''}`,
    );
    // One bar width for every row, so the bars compare; the figures follow them.
    const width = Math.max(4, INSPECT_TEXT_WIDTH - 2 - nameWidth - 1 - Math.max(...figures.map((f) => [...f].length)) - 1);
    report.largestPartitions.forEach((p, i) => {
      lines.push(
        `  ${pad(fit(partitionLabel(p), nameWidth), nameWidth)} ${c.bar(pad(bar(p.bytes, maxBytes, width), width))} ${figures[i]}`,
      );
    });
  }

  // ---- buckets ----
  if (report.bucketSkew.length === 0) {
    line('bucket skew', c.dim('no partition spreads over two or more buckets'));
  } else {
    const worst = report.bucketSkew[0]!;
    const text =
      `${worst.ratio.toFixed(1)}× in ${partitionLabel(worst)}: bucket ${worst.largest.bucket} holds ${formatBytes(worst.largest.bytes)}, ` +
      `mean ${formatBytes(Math.round(worst.meanBytes))} over ${worst.buckets} buckets`;
    const shown = fit(text, INSPECT_TEXT_WIDTH - LABEL);
    line('bucket skew', worst.ratio >= 2 ? c.warn(shown) : shown);
    const sizes = worst.sizes.slice(0, SPARK_WIDTH);
    sub('by bucket', `${c.bar(sparkline(sizes.map((b) => b.bytes)))}${worst.sizes.length > sizes.length ? '…' : ''}`);
  }

  // ---- manifests ----
  const m = report.manifests;
  line(
    'manifests',
    `${plural(m.count, 'manifest')} · ${formatBytes(m.bytes)} · ${plural(m.entries, 'entry', 'entries')}` +
      (m.deleteEntries > 0 ? ` (${formatCount(m.deleteEntries)} DELETE)` : '') +
      ` · lists ${formatBytes(m.listBytes)}`,
  );

  // ---- maintenance ----
  const o = report.maintenance;
  if (o === null) {
    line('maintenance', c.dim('not planned (--skip-maintenance)'));
  } else {
    line('maintenance', 'what each job would do now (dry runs)');
    // Job errors start with the table location, which the summary already shows.
    const notPlanned = (j: JobNotPlanned): string =>
      c.dim(fit(`not planned: ${j.reason.replace(`${report.table}: `, '')}`, INSPECT_TEXT_WIDTH - LABEL));
    const e = o.expire;
    sub(
      'expire',
      !isPlanned(e)
        ? notPlanned(e)
        : e.snapshots === 0
          ? `nothing (retain min ${e.retainMin}, ${formatDuration(e.timeRetainedMs)})`
          : fit(
              `${plural(e.snapshots, 'snapshot')} (#${e.fromSnapshotId}–#${e.toSnapshotId}), ${plural(e.files, 'file')}, ${formatBytes(e.bytes)}` +
                ` (retain min ${e.retainMin}, ${formatDuration(e.timeRetainedMs)})`,
              INSPECT_TEXT_WIDTH - LABEL,
            ),
    );
    const r = o.orphans;
    sub(
      'orphans',
      !isPlanned(r)
        ? notPlanned(r)
        : `${r.files > 0 ? c.warn(plural(r.files, 'file')) : 'no files'}, ${formatBytes(r.bytes)}, older than ${r.olderThan.replace(/\.\d+Z$/, 'Z')}`,
    );
    const k = o.compaction;
    sub(
      'compaction',
      !isPlanned(k)
        ? notPlanned(k)
        : k.files === 0
          ? fit(nothingToMergeText(k, fs.smallFiles), INSPECT_TEXT_WIDTH - LABEL)
          : `${plural(k.files, 'file')} (${formatBytes(k.bytes)}) in ${plural(k.windows, k.mode === 'append' ? 'window' : 'bucket')}, ` +
            `${plural(k.partitions, 'partition')}${k.remainingWindows > 0 ? `; ${formatCount(k.remainingWindows)} more in later runs` : ''}`,
    );
    const mm = o.manifests;
    sub(
      'manifests',
      !isPlanned(mm)
        ? notPlanned(mm)
        : mm.manifestsToMerge === 0
          ? 'nothing to merge'
          : `${plural(mm.manifestsToMerge, 'manifest')} to merge`,
    );
  }
  return lines.join('\n') + '\n';
}

/** `2024-05-01T10:00:00Z` (seconds precision keeps the line short). */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
