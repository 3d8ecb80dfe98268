/**
 * Pieces the maintenance commands (`expire-snapshots`, `remove-orphan-files`, `compact`,
 * `compact-manifests`, `maintain`) share: running a job so that Ctrl-C maps to exit code 130,
 * progress bars fed from the jobs' progress callbacks, dry-run listings with sizes, and the
 * `--json` summary objects.
 */
import type { FileIO } from '@tidemark/storage';
import type { Table } from '@tidemark/core';
import type {
  CompactAppendSummary,
  CompactPrimaryKeySummary,
  CompactManifestsSummary,
  CompactProgress,
  ExpireSnapshotsSummary,
  MaintenanceProgress,
  RemoveOrphanFilesSummary,
} from '@tidemark/maintenance';
import type { CommandContext } from '../context.js';
import { InterruptedError } from '../errors.js';
import { formatBytes, type ProgressReporter } from '../output/progress.js';
import { printLine, progressFor } from './shared.js';

/** Above this many files a dry run prints paths without looking up each size. */
export const DRY_RUN_SIZE_LOOKUP_LIMIT = 10_000;

/**
 * Runs a job with the command's abort signal. When Ctrl-C aborted it, the job's own abort error
 * (e.g. `MaintenanceAbortedError`) is replaced by the signal's reason so `main` exits with 130.
 */
export async function runJob<T>(ctx: CommandContext, job: () => Promise<T>): Promise<T> {
  try {
    return await job();
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new InterruptedError();
    throw e;
  }
}

/**
 * Progress bars for the delete jobs: one bar per phase (`reading-deltas`, `data-files`,
 * `manifests`, `snapshots`, `listing` …), fed with the deltas of the cumulative counts the jobs
 * report. Draws nothing unless stderr is a terminal.
 */
export class PhaseProgress {
  private bar: ProgressReporter | undefined;
  private phase = '';
  private done = 0;
  private bytes = 0;

  /** `units` names what a phase counts when it is not files (e.g. `{ snapshots: 'snapshots' }`). */
  constructor(
    private readonly ctx: CommandContext,
    private readonly label: string,
    private readonly units: Readonly<Record<string, string>> = {},
  ) {}

  /** The callback to hand to the job as `onProgress`. */
  readonly onProgress = (p: MaintenanceProgress): void => {
    if (p.phase !== this.phase || this.bar === undefined) {
      this.bar?.finish();
      this.phase = p.phase;
      this.done = 0;
      this.bar = progressFor(this.ctx, `${this.label}: ${p.phase}`, this.units[p.phase] ?? 'files', p.total);
    } else if (p.total !== undefined) {
      this.bar.setTotal(p.total);
    }
    const count = Math.max(0, p.done - this.done);
    const bytes = Math.max(0, p.bytesFreed - this.bytes);
    this.done = Math.max(this.done, p.done);
    this.bytes = Math.max(this.bytes, p.bytesFreed);
    this.bar.add(count, bytes);
  };

  finish(): void {
    this.bar?.finish();
  }
}

/** Progress bar of a compaction run (counts, bytes read and ETA by bytes). */
export class CompactProgressBar {
  private bar: ProgressReporter | undefined;
  private files = 0;
  private bytes = 0;

  constructor(
    private readonly ctx: CommandContext,
    private readonly label: string,
  ) {}

  readonly onProgress = (p: CompactProgress): void => {
    this.bar ??= progressFor(this.ctx, this.label, 'files', p.filesTotal, p.bytesTotal);
    this.bar.add(Math.max(0, p.filesDone - this.files), Math.max(0, p.bytesRead - this.bytes));
    this.files = Math.max(this.files, p.filesDone);
    this.bytes = Math.max(this.bytes, p.bytesRead);
  };

  finish(): void {
    this.bar?.finish();
  }
}

/** A file a dry run would delete; `size` is null when it was not looked up (or vanished). */
export interface DryRunFile {
  readonly path: string;
  readonly size: number | null;
}

/**
 * Sizes of the files a dry run lists, looked up with a bounded number of concurrent `stat`s (at
 * most {@link DRY_RUN_SIZE_LOOKUP_LIMIT} files; beyond that sizes are null and only the job's
 * total is known).
 */
export async function dryRunFiles(io: FileIO, paths: readonly string[], signal?: AbortSignal): Promise<DryRunFile[]> {
  const out: DryRunFile[] = paths.map((path) => ({ path, size: null }));
  if (paths.length > DRY_RUN_SIZE_LOOKUP_LIMIT) return out;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      if (signal?.aborted) return;
      const i = next++;
      try {
        out[i] = { path: paths[i]!, size: (await io.stat(paths[i]!)).size };
      } catch {
        // Gone meanwhile, or not stat-able: listed without a size.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, paths.length) }, worker));
  return out;
}

/** Prints a dry-run listing: one `size<TAB>path` line per file, then the total. */
export async function printDryRun(ctx: CommandContext, files: readonly DryRunFile[], totalBytes: number, what: string): Promise<void> {
  for (const f of files) await printLine(ctx, `${f.size === null ? '?' : String(f.size)}\t${f.path}`);
  await printLine(
    ctx,
    `dry run: would delete ${files.length} ${what} (${formatBytes(totalBytes)}, ${totalBytes} bytes); nothing was changed`,
  );
}

/** The `--json` object of `expire-snapshots` (also one part of `maintain`'s). */
export function expireJson(table: string, s: ExpireSnapshotsSummary, files?: readonly DryRunFile[]): Record<string, unknown> {
  return {
    command: 'expire-snapshots',
    table,
    dryRun: s.dryRun,
    snapshotsExpired: s.snapshotsExpired,
    changelogsExpired: s.changelogsExpired,
    earliestSnapshotId: s.earliestSnapshotId,
    filesDeleted: s.filesDeleted,
    bytesFreed: s.bytesFreed,
    durationMs: s.durationMs,
    ...(files ? { files } : {}),
  };
}

/** The `--json` object of `remove-orphan-files`. */
export function orphansJson(
  table: string,
  s: RemoveOrphanFilesSummary,
  olderThanMs: number,
  graceMs: number,
  files?: readonly DryRunFile[],
): Record<string, unknown> {
  return {
    command: 'remove-orphan-files',
    table,
    dryRun: s.dryRun,
    olderThan: new Date(olderThanMs).toISOString(),
    graceMs,
    filesScanned: s.filesScanned,
    filesDeleted: s.filesDeleted,
    inflightRecordsDeleted: s.inflightRecordsDeleted,
    bytesFreed: s.bytesFreed,
    durationMs: s.durationMs,
    ...(files ? { files } : {}),
  };
}

/** The `--json` object of `compact`. */
export function compactJson(table: string, s: CompactAppendSummary): Record<string, unknown> {
  return {
    command: 'compact',
    table,
    dryRun: s.dryRun,
    snapshotId: s.snapshotId,
    baseSnapshotId: s.baseSnapshotId,
    filesBefore: s.filesBefore,
    filesAfter: s.filesAfter,
    bytesRead: s.bytesRead,
    bytesWritten: s.bytesWritten,
    rows: s.rows,
    partitions: s.partitions,
    windows: s.windows,
    remainingWindows: s.remainingWindows,
    ...('filesUpgraded' in s ? { buckets: s.windows, filesUpgraded: s.filesUpgraded } : {}),
    durationMs: s.durationMs,
    ...(s.plan ? { plan: s.plan } : {}),
    ...(s.gaveUp ? { gaveUp: s.gaveUp } : {}),
  };
}

/** The `--json` object of `compact-manifests`. */
export function compactManifestsJson(table: string, s: CompactManifestsSummary): Record<string, unknown> {
  return {
    command: 'compact-manifests',
    table,
    dryRun: s.dryRun,
    snapshotId: s.snapshotId,
    manifestsBefore: s.manifestsBefore,
    manifestsAfter: s.manifestsAfter,
    manifestsToMerge: s.manifestsToMerge,
    durationMs: s.durationMs,
  };
}

/** One-line human summaries. */
export function expireText(s: ExpireSnapshotsSummary): string {
  const verb = s.dryRun ? 'would expire' : 'expired';
  const earliest =
    s.earliestSnapshotId === null
      ? 'the table has no snapshots'
      : `earliest snapshot ${s.dryRun ? 'would be' : 'is now'} ${s.earliestSnapshotId}`;
  const changelogs = s.changelogsExpired > 0 ? ` and ${s.changelogsExpired} long-lived changelog(s)` : '';
  return `${verb} ${s.snapshotsExpired} snapshot(s)${changelogs}, ${s.dryRun ? 'would delete' : 'deleted'} ${s.filesDeleted} file(s), ${formatBytes(s.bytesFreed)} freed in ${(s.durationMs / 1000).toFixed(1)}s; ${earliest}`;
}

export function orphansText(s: RemoveOrphanFilesSummary): string {
  return `scanned ${s.filesScanned} object(s); ${s.dryRun ? 'would delete' : 'deleted'} ${s.filesDeleted} orphan file(s), ${formatBytes(s.bytesFreed)} in ${(s.durationMs / 1000).toFixed(1)}s`;
}

export function compactText(s: CompactAppendSummary | CompactPrimaryKeySummary): string {
  if ('filesUpgraded' in s) return compactPrimaryKeyText(s);
  if (s.dryRun) {
    return `dry run: would rewrite ${s.filesBefore} file(s) (${formatBytes(s.plan?.reduce((n, w) => n + w.bytes, 0) ?? 0)}) in ${s.windows} window(s) of ${s.partitions} partition(s); ${s.remainingWindows} window(s) left for later runs`;
  }
  const base =
    s.snapshotId === null
      ? 'nothing to compact'
      : `compacted ${s.filesBefore} file(s) into ${s.filesAfter} (${formatBytes(s.bytesRead)} read, ${formatBytes(s.bytesWritten)} written, ${s.rows} rows) in snapshot ${s.snapshotId}`;
  const left = s.remainingWindows > 0 ? `; ${s.remainingWindows} window(s) left for later runs` : '';
  const gave = s.gaveUp ? `; gave up ${s.gaveUp.windows} window(s): ${s.gaveUp.reason}` : '';
  return `${base}${left}${gave}`;
}

function compactPrimaryKeyText(s: CompactPrimaryKeySummary): string {
  if (s.dryRun) {
    return `dry run: would compact ${s.filesBefore} file(s) (${formatBytes(s.plan?.reduce((n, w) => n + w.bytes, 0) ?? 0)}) in ${s.windows} bucket(s) of ${s.partitions} partition(s)`;
  }
  const gave = s.gaveUp ? `; gave up ${s.gaveUp.windows} bucket(s): ${s.gaveUp.reason}` : '';
  if (s.snapshotId === null) return `nothing to compact${gave}`;
  const moved = s.filesUpgraded > 0 ? `, ${s.filesUpgraded} of them only moved up a level` : '';
  return (
    `compacted ${s.filesBefore} file(s) into ${s.filesAfter}${moved} in ${s.windows} bucket(s) ` +
    `(${formatBytes(s.bytesRead)} read, ${formatBytes(s.bytesWritten)} written) in snapshot ${s.snapshotId}${gave}`
  );
}

export function compactManifestsText(s: CompactManifestsSummary): string {
  if (s.dryRun) return `dry run: ${s.manifestsToMerge} of ${s.manifestsBefore} manifest(s) would be merged`;
  if (s.snapshotId === null) return `nothing to merge (${s.manifestsBefore} manifest(s))`;
  return `merged ${s.manifestsToMerge} manifest(s): ${s.manifestsBefore} -> ${s.manifestsAfter} in snapshot ${s.snapshotId}`;
}

/** Whether a table is a primary-key table (compaction of those is not built). */
export function isPrimaryKeyTable(table: Table): boolean {
  return table.schema().primaryKeys.length > 0;
}
