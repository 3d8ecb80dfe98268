/**
 * The settings of one expiration run: the caller's options over the table options, with Paimon's
 * defaults, validated before anything is read or deleted (the first step of
 * {@link expireSnapshots} and {@link expireChangelogs}).
 */
import type { CoreOptions } from '../core-options.js';
import { MaintenanceArgumentError } from './maintenance-errors.js';
import type { MaintenanceRunOptions } from './table-files.js';

/** Snapshot files deleted per batch by default: one DeleteObjects request on S3. */
export const DEFAULT_EXPIRE_BATCH = 1000;

/** Options of {@link expireSnapshots}; unset values come from the table options. */
export interface ExpireSnapshotsOptions extends MaintenanceRunOptions {
  /** Keep at least this many snapshots (`snapshot.num-retained.min`, default 10; at least 1). */
  readonly retainMin?: number;
  /** Keep at most this many snapshots (`snapshot.num-retained.max`, default unlimited). */
  readonly retainMax?: number;
  /**
   * Epoch millis: snapshots are expired only when their successor was committed before this
   * time. Default `now − snapshot.time-retained` (1 h).
   */
  readonly olderThanMs?: number;
  /** Expire at most this many snapshots per run (`snapshot.expire.limit`, default 50). */
  readonly expireLimit?: number;
  /** Alias of {@link expireLimit}. */
  readonly maxDeletes?: number;
  /**
   * Snapshot files deleted per batch (default 1,000, one S3 DeleteObjects request), and changelog
   * files by the changelog expiration that follows. The EARLIEST hint is written once per batch; a
   * kill in the middle of a batch leaves at most this many leftover snapshot files below it, which
   * the next run deletes.
   */
  readonly snapshotBatchSize?: number;
}

/** Options of {@link expireChangelogs}; unset values come from the table options. */
export interface ExpireChangelogsOptions extends MaintenanceRunOptions {
  /** `changelog.num-retained.min` (default: the snapshot setting). */
  readonly retainMin?: number;
  /** `changelog.num-retained.max` (default: the snapshot setting). */
  readonly retainMax?: number;
  /** Epoch millis: changelogs committed before it may go. Default `now − changelog.time-retained`. */
  readonly olderThanMs?: number;
  /** At most this many changelogs per run (`snapshot.expire.limit`). */
  readonly expireLimit?: number;
  /**
   * Changelog metadata files deleted per batch (default 1,000, one S3 DeleteObjects request). The
   * EARLIEST hint is written once per batch; a kill in the middle of a batch leaves at most this
   * many leftover files below it, which the next run deletes.
   */
  readonly batchSize?: number;
}

/** What decides which snapshots or changelogs a run expires. */
export interface RetentionSettings {
  readonly retainMin: number;
  readonly retainMax: number;
  /** At most this many per run. */
  readonly limit: number;
  /** Epoch millis: only those whose successor is older may go. */
  readonly olderThan: number;
  /** Metadata files deleted per batch. */
  readonly batchSize: number;
}

/** {@link RetentionSettings} of a snapshot expiration. */
export interface SnapshotExpireSettings extends RetentionSettings {
  /** The changelog outlives the snapshots in `changelog/` ({@link changelogDecoupled}). */
  readonly decoupled: boolean;
}

/**
 * Whether the changelog of a table outlives its snapshots: it has a changelog producer and a
 * `changelog.*` retention above the snapshot one (Java's `isChangelogDecoupled`).
 */
export function changelogDecoupled(o: CoreOptions): boolean {
  if (o.changelogProducer === 'none') return false;
  const min = o.changelogNumRetainedMin;
  const max = o.changelogNumRetainedMax;
  const time = o.changelogTimeRetainedMs;
  return (
    (max !== null && max > o.snapshotNumRetainedMax) ||
    (min !== null && min > o.snapshotNumRetainedMin) ||
    (time !== null && time > o.snapshotTimeRetainedMs)
  );
}

/**
 * Settings of a snapshot expiration at `now`.
 *
 * @throws MaintenanceArgumentError naming the option that is out of range.
 */
export function snapshotExpireSettings(options: ExpireSnapshotsOptions, o: CoreOptions, now: number): SnapshotExpireSettings {
  let retainMin = options.retainMin ?? o.snapshotNumRetainedMin;
  let retainMax = options.retainMax ?? o.snapshotNumRetainedMax;
  const limit = options.expireLimit ?? options.maxDeletes ?? o.snapshotExpireLimit;
  let olderThan = options.olderThanMs ?? now - o.snapshotTimeRetainedMs;
  // A changelog retained longer than the snapshots outlives them in changelog/ (decoupled); a
  // shorter one, or the delta files of a table without producer, live and die with the snapshots,
  // so there the longer setting keeps the snapshots longer.
  const decoupled = changelogDecoupled(o);
  if (o.changelogProducer !== 'none' && !decoupled) {
    const clMin = o.changelogNumRetainedMin;
    const clMax = o.changelogNumRetainedMax;
    const clTime = o.changelogTimeRetainedMs;
    if (clMin !== null && clMin > retainMin) retainMin = clMin;
    if (clMax !== null && clMax > retainMax) retainMax = clMax;
    if (retainMax < retainMin) retainMax = retainMin;
    if (clTime !== null && now - clTime < olderThan) olderThan = now - clTime;
  }
  if (!Number.isInteger(retainMin) || retainMin < 1) {
    throw new MaintenanceArgumentError(`retainMin (snapshot.num-retained.min) must be an integer >= 1, got ${retainMin}`);
  }
  if (!Number.isInteger(retainMax) || retainMax < retainMin) {
    throw new MaintenanceArgumentError(
      `retainMax (snapshot.num-retained.max) must be an integer >= retainMin (${retainMin}), got ${retainMax}`,
    );
  }
  if (!Number.isInteger(limit) || limit < 1)
    throw new MaintenanceArgumentError(`expireLimit (snapshot.expire.limit) must be an integer >= 1, got ${limit}`);
  if (!Number.isFinite(olderThan)) throw new MaintenanceArgumentError(`olderThanMs must be epoch millis, got ${olderThan}`);
  const batchSize = options.snapshotBatchSize ?? DEFAULT_EXPIRE_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new MaintenanceArgumentError(`snapshotBatchSize must be an integer >= 1, got ${batchSize}`);
  }
  return { retainMin, retainMax, limit, olderThan, batchSize, decoupled };
}

/**
 * Settings of a changelog expiration at `now`: unset changelog settings fall back to the snapshot
 * ones.
 *
 * @throws MaintenanceArgumentError naming the option that is out of range.
 */
export function changelogExpireSettings(options: ExpireChangelogsOptions, o: CoreOptions, now: number): RetentionSettings {
  const retainMin = options.retainMin ?? o.changelogNumRetainedMin ?? o.snapshotNumRetainedMin;
  const retainMax = options.retainMax ?? o.changelogNumRetainedMax ?? o.snapshotNumRetainedMax;
  const limit = options.expireLimit ?? o.snapshotExpireLimit;
  const olderThan = options.olderThanMs ?? now - (o.changelogTimeRetainedMs ?? o.snapshotTimeRetainedMs);
  if (!Number.isInteger(retainMin) || retainMin < 1) {
    throw new MaintenanceArgumentError(`changelog.num-retained.min must be an integer >= 1, got ${retainMin}`);
  }
  if (!Number.isInteger(retainMax) || retainMax < retainMin) {
    throw new MaintenanceArgumentError(
      `changelog.num-retained.max must be an integer >= changelog.num-retained.min (${retainMin}), got ${retainMax}`,
    );
  }
  const batchSize = options.batchSize ?? DEFAULT_EXPIRE_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new MaintenanceArgumentError(`batchSize must be an integer >= 1, got ${batchSize}`);
  return { retainMin, retainMax, limit, olderThan, batchSize };
}
