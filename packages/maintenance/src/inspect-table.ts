/**
 * A picture of a table for operators deciding on maintenance: the snapshot timeline, data-file
 * sizes against `target-file-size`, partitions and bucket skew, manifests, and what each
 * maintenance job would do now. The "would do" parts are the jobs' own dry runs, so the report
 * and the jobs never disagree. Read-only: nothing is written or deleted.
 */
import { MaintenanceArgumentError, OPTION, checkAborted, coreOptions, expireSnapshots, tableOptions, type Table } from '@tidemark/core';
import { compactAppendTable, type CompactAppendSummary } from './compact-append.js';
import { compactManifests } from './compact-manifests.js';
import { compactPrimaryKeyTable } from './compact-primary-key.js';
import { fileSizeBins } from './file-size-bins.js';
import { bucketSizes, collectLiveFileStats, type LiveFileStats, type PartitionAgg } from './live-file-stats.js';
import { DEFAULT_ORPHAN_OLDER_THAN_MS, removeOrphanFiles } from './remove-orphan-files.js';
import { collectTimeline } from './snapshot-timeline.js';
import {
  TABLE_REPORT_VERSION,
  type BucketSkew,
  type CompactionPlan,
  type ExpirePlan,
  type JobNotPlanned,
  type MaintenanceOutlook,
  type ManifestCompactionPlan,
  type OrphanPlan,
  type PartitionReport,
  type TableReport,
} from './table-report.js';

/** Default of {@link InspectTableOptions.timelineLimit}. */
export const DEFAULT_TIMELINE_LIMIT = 500;
/** Default of {@link InspectTableOptions.largestPartitions} and {@link InspectTableOptions.skewedPartitions}. */
export const DEFAULT_REPORT_PARTITIONS = 10;

/** Steps of {@link inspectTable}, reported through `onProgress`. */
export type InspectPhase = 'timeline' | 'files' | 'expire' | 'orphans' | 'compaction' | 'manifests';

/** Options of {@link inspectTable}. */
export interface InspectTableOptions {
  /** At most this many of the newest snapshots on the timeline (default {@link DEFAULT_TIMELINE_LIMIT}). */
  readonly timelineLimit?: number;
  /** Partitions listed as largest (default {@link DEFAULT_REPORT_PARTITIONS}). */
  readonly largestPartitions?: number;
  /** Partitions listed by bucket skew (default {@link DEFAULT_REPORT_PARTITIONS}). */
  readonly skewedPartitions?: number;
  /**
   * Dry-run the maintenance jobs (default true). Orphan cleanup lists every object under the
   * table directory, which takes a while on big tables; false skips all the dry runs.
   */
  readonly maintenance?: boolean;
  /** Epoch millis: files older than this count as orphans (default now − 1 day, as `remove-orphan-files`). */
  readonly orphanOlderThanMs?: number;
  /** Clock (tests); also the reference time of the expiration and orphan dry runs. */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
  /** Called when a step starts. */
  readonly onProgress?: (phase: InspectPhase) => void;
}

/**
 * Gathers a {@link TableReport} of `table`'s latest snapshot. Memory is bounded by the number of
 * partitions and buckets and by `timelineLimit`, not by the number of files.
 *
 * @throws MaintenanceArgumentError for a non-positive limit or an orphan threshold in the future.
 * @throws MaintenanceAbortedError when `signal` aborts.
 */
export async function inspectTable(table: Table, options: InspectTableOptions = {}): Promise<TableReport> {
  const now = (options.now ?? Date.now)();
  const timelineLimit = positive(options.timelineLimit, 'timelineLimit') ?? DEFAULT_TIMELINE_LIMIT;
  const largest = positive(options.largestPartitions, 'largestPartitions') ?? DEFAULT_REPORT_PARTITIONS;
  const skewed = positive(options.skewedPartitions, 'skewedPartitions') ?? DEFAULT_REPORT_PARTITIONS;
  const orphanOlderThan = options.orphanOlderThanMs ?? now - DEFAULT_ORPHAN_OLDER_THAN_MS;
  if (orphanOlderThan > now) {
    throw new MaintenanceArgumentError(`orphanOlderThanMs ${new Date(orphanOlderThan).toISOString()} is in the future`);
  }
  const signal = options.signal;
  const phase = (p: InspectPhase): void => {
    checkAborted(signal);
    options.onProgress?.(p);
  };
  const schema = await table.schemaManager.latest();
  const o = coreOptions(schema);
  const targetFileSize = o.targetFileSize;
  const smallFileBytes = targetFileSize * o.compactionSmallFileRatio;
  const bins = fileSizeBins(targetFileSize);

  phase('timeline');
  const timeline = await collectTimeline(table, timelineLimit, signal);
  const tags = (await table.tagManager.list()).map(({ name, tag }) => ({ name, snapshotId: tag.id }));

  phase('files');
  const latest = await table.snapshotManager.latest();
  const stats = await collectLiveFileStats(table, latest, bins, smallFileBytes, signal);
  const partitionReport = (p: PartitionAgg): PartitionReport => ({
    partition: table.paths.partitionSpec(p.partition),
    path: table.paths.partitionPath(p.partition),
    files: p.files,
    bytes: p.bytes,
    rows: p.rows,
    buckets: p.buckets.size,
    smallFiles: p.smallFiles,
    histogram: p.histogram,
  });

  const maintenance = options.maintenance === false ? null : await outlook(table, now, orphanOlderThan, phase, signal);

  return {
    version: TABLE_REPORT_VERSION,
    table: table.location,
    generatedAt: new Date(now).toISOString(),
    generatedAtMillis: now,
    schemaId: schema.id,
    primaryKeys: schema.primaryKeys,
    partitionKeys: schema.partitionKeys,
    bucket: o.bucket,
    timeline,
    tags,
    liveFiles: {
      files: stats.files,
      bytes: stats.bytes,
      rows: stats.rows,
      deletedRows: stats.deletedRows,
      partitions: stats.partitions.size,
      buckets: [...stats.partitions.values()].reduce((s, p) => s + p.buckets.size, 0),
      levels: Object.fromEntries([...stats.levels.entries()].sort((a, b) => a[0] - b[0]).map(([l, n]) => [String(l), n])),
    },
    fileSizes: { targetFileSize, smallFileBytes, bins, histogram: stats.histogram, smallFiles: stats.smallFiles },
    largestPartitions: top(stats.partitions.values(), largest, (a, b) => b.bytes - a.bytes || b.files - a.files).map(partitionReport),
    bucketSkew: skew(table, stats, skewed),
    manifests: stats.manifests,
    maintenance,
  };
}

/** The `n` first of `items` in `order`, keeping at most `n` at a time (partitions may be many). */
function top<T>(items: Iterable<T>, n: number, order: (a: T, b: T) => number): T[] {
  const kept: T[] = [];
  for (const item of items) {
    kept.push(item);
    if (kept.length > 2 * n) {
      kept.sort(order);
      kept.length = n;
    }
  }
  return kept.sort(order).slice(0, n);
}

/** Partitions spread over two or more buckets, most uneven first. */
function skew(table: Table, stats: LiveFileStats, n: number): BucketSkew[] {
  const candidates: Array<{ p: PartitionAgg; buckets: number; ratio: number; meanBytes: number }> = [];
  for (const p of stats.partitions.values()) {
    const buckets = p.totalBuckets > 0 ? Math.max(p.totalBuckets, p.buckets.size) : p.buckets.size;
    if (buckets < 2 || p.bytes === 0) continue;
    const meanBytes = p.bytes / buckets;
    let max = 0;
    for (const b of p.buckets.values()) max = Math.max(max, b.bytes);
    candidates.push({ p, buckets, ratio: max / meanBytes, meanBytes });
  }
  return top(candidates, n, (a, b) => b.ratio - a.ratio || b.p.bytes - a.p.bytes).map(({ p, buckets, ratio, meanBytes }) => {
    const sizes = bucketSizes(p, buckets);
    const largestBucket = sizes.reduce((m, b) => (b.bytes > m.bytes ? b : m), sizes[0]!);
    return {
      partition: table.paths.partitionSpec(p.partition),
      path: table.paths.partitionPath(p.partition),
      buckets,
      ratio,
      meanBytes,
      largest: largestBucket,
      sizes,
    };
  });
}

/** Dry runs of every maintenance job. A job that refuses the table is reported as not planned. */
async function outlook(
  table: Table,
  now: number,
  orphanOlderThan: number,
  phase: (p: InspectPhase) => void,
  signal: AbortSignal | undefined,
): Promise<MaintenanceOutlook> {
  phase('expire');
  const expire = await notPlannedOn(async (): Promise<ExpirePlan> => {
    const o = tableOptions(await table.schemaManager.latest());
    const earliest = await table.snapshotManager.earliestId();
    const r = await expireSnapshots(table, { dryRun: true, listDeleted: false, now: () => now, ...(signal ? { signal } : {}) });
    const some = r.snapshotsExpired > 0 && earliest !== null && r.earliestSnapshotId !== null;
    return {
      status: 'planned',
      snapshots: r.snapshotsExpired,
      fromSnapshotId: some ? earliest : null,
      toSnapshotId: some ? r.earliestSnapshotId! - 1 : null,
      files: r.filesDeleted,
      bytes: r.bytesFreed,
      retainMin: o.snapshotNumRetainedMin,
      retainMax: o.snapshotNumRetainedMax,
      timeRetainedMs: o.snapshotTimeRetainedMs,
      expireLimit: o.snapshotExpireLimit,
    };
  });

  phase('orphans');
  const orphans = await notPlannedOn(async (): Promise<OrphanPlan> => {
    const r = await removeOrphanFiles(table, {
      dryRun: true,
      listDeleted: false,
      olderThanMs: orphanOlderThan,
      now: () => now,
      ...(signal ? { signal } : {}),
    });
    return {
      status: 'planned',
      olderThan: new Date(orphanOlderThan).toISOString(),
      files: r.filesDeleted,
      bytes: r.bytesFreed,
      filesScanned: r.filesScanned,
    };
  });

  phase('compaction');
  const compaction = await notPlannedOn(async (): Promise<CompactionPlan> => {
    const pk = table.isPrimaryKeyTable;
    const r: CompactAppendSummary = pk
      ? await compactPrimaryKeyTable(table, { dryRun: true, ...(signal ? { signal } : {}) })
      : await compactAppendTable(table, { dryRun: true, ...(signal ? { signal } : {}) });
    return {
      status: 'planned',
      mode: pk ? 'primary-key' : 'append',
      files: r.filesBefore,
      // From the planned windows: a dry run's summary leaves out what it did not read.
      bytes: (r.plan ?? []).reduce((s, w) => s + w.bytes, 0),
      rows: (r.plan ?? []).reduce((s, w) => s + w.rows, 0),
      windows: r.windows,
      partitions: r.partitions,
      remainingWindows: r.remainingWindows,
      trigger: pk
        ? { option: OPTION.NUM_SORTED_RUN_COMPACTION_TRIGGER, value: table.context.options.numSortedRunCompactionTrigger }
        : { option: OPTION.COMPACTION_MIN_FILE_NUM, value: table.context.options.compactionMinFileNum },
    };
  });

  phase('manifests');
  const manifests = await notPlannedOn(async (): Promise<ManifestCompactionPlan> => {
    const r = await compactManifests(table, { dryRun: true, ...(signal ? { signal } : {}) });
    return { status: 'planned', manifestsToMerge: r.manifestsToMerge };
  });
  return { expire, orphans, compaction, manifests };
}

/**
 * Runs a dry run; a job that refuses the table or its options (argument errors) is reported as
 * not planned rather than failing the whole report. Anything else (a damaged table, a network
 * failure, an abort) propagates.
 */
async function notPlannedOn<T>(run: () => Promise<T>): Promise<T | JobNotPlanned> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof MaintenanceArgumentError) return { status: 'not-planned', reason: e.message };
    throw e;
  }
}

function positive(v: number | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 1) throw new MaintenanceArgumentError(`${name} must be a positive integer, got ${v}`);
  return v;
}
