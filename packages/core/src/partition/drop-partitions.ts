/**
 * Dropping partitions with Paimon's drop-partition commit: one OVERWRITE snapshot deleting every
 * live file of the partitions (FileStoreCommit.dropPartitions). Time travel to older snapshots
 * still reads them; snapshot expiration and orphan cleanup reclaim the files later. Used by
 * `tidemark drop-partition` and by partition expiration.
 */
import { randomUUID } from 'node:crypto';
import type { ManifestEntry, Snapshot } from '@tidemark/format';
import { FileStoreCommit } from '../commit/file-store-commit.js';
import { CommitInputError } from '../commit/commit-errors.js';
import { TidemarkUserError } from '../errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import { listPartitionEntries, type PartitionEntry } from './partition-entries.js';

/** No partition of the table matches the spec given. */
export class PartitionNotFoundError extends TidemarkUserError {}

/** A partition a drop removes (or would remove, in a dry run), with what it held. */
export interface DroppedPartition {
  /** Relative directory, e.g. `dt=2024-03-05`. */
  readonly partition: string;
  readonly spec: Readonly<Record<string, string>>;
  readonly recordCount: number;
  readonly fileCount: number;
  readonly fileSizeInBytes: number;
}

/** What a drop did. */
export interface DropPartitionsSummary {
  readonly dryRun: boolean;
  /** The snapshot the partitions were read from (null: the table has no snapshot). */
  readonly baseSnapshotId: number | null;
  readonly partitions: readonly DroppedPartition[];
  /** Snapshots the drop created (one per `batchSize` partitions; empty in a dry run). */
  readonly snapshotIds: readonly number[];
  readonly recordCount: number;
  readonly fileCount: number;
  readonly fileSizeInBytes: number;
}

/** Settings of {@link dropPartitions} and {@link commitPartitionDrop}. */
export interface DropPartitionsOptions {
  /** Plan only: report the partitions without committing. */
  readonly dryRun?: boolean;
  /** Commit user of the drop snapshot(s); default a fresh UUID. */
  readonly commitUser?: string;
  /** Partitions per snapshot (default all in one). */
  readonly batchSize?: number | null;
  /** Clock of the snapshot times (tests). */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
  /** See `DropPartitionsCallOptions.verify`: checks the live files of each batch before it is dropped. */
  readonly verify?: (live: readonly ManifestEntry[]) => void;
}

/** A partition's line in a summary. */
export function droppedPartition(e: PartitionEntry): DroppedPartition {
  return { partition: e.path, spec: e.spec, recordCount: e.recordCount, fileCount: e.fileCount, fileSizeInBytes: e.fileSizeInBytes };
}

/**
 * Commits the drop of `entries` (exact partitions), `batchSize` partitions per OVERWRITE
 * snapshot, and sums them up. Nothing is committed in a dry run or when `entries` is empty.
 */
export async function commitPartitionDrop(
  ctx: TableContext,
  base: Snapshot | null,
  entries: readonly PartitionEntry[],
  options: DropPartitionsOptions = {},
): Promise<DropPartitionsSummary> {
  const dryRun = options.dryRun === true;
  const snapshotIds: number[] = [];
  if (!dryRun && entries.length > 0) {
    const commit = new FileStoreCommit(ctx, { shareWithTable: true, ...(options.now ? { now: options.now } : {}), logger: ctx.logger });
    const commitUser = options.commitUser ?? randomUUID();
    const size = options.batchSize ?? entries.length;
    for (let i = 0; i < entries.length; i += size) {
      const r = await commit.dropPartitions(
        entries.slice(i, i + size).map((e) => e.partition),
        { commitUser, ...(options.verify ? { verify: options.verify } : {}) },
      );
      if (r.status === 'committed') snapshotIds.push(r.snapshotId);
    }
  }
  const partitions = entries.map(droppedPartition);
  return {
    dryRun,
    baseSnapshotId: base?.id ?? null,
    partitions,
    snapshotIds,
    recordCount: partitions.reduce((n, p) => n + p.recordCount, 0),
    fileCount: partitions.reduce((n, p) => n + p.fileCount, 0),
    fileSizeInBytes: partitions.reduce((n, p) => n + p.fileSizeInBytes, 0),
  };
}

/**
 * Drops the partitions matching any of `specs` (each naming some or all partition keys, values as
 * in directory names; `partition.default-name` for NULL) from the latest snapshot.
 *
 * @throws CommitInputError for an unpartitioned table, an empty spec or a key that is not a partition key.
 * @throws PartitionNotFoundError when no partition matches a spec (nothing is dropped then).
 */
export async function dropPartitions(
  ctx: TableContext,
  specs: readonly Readonly<Record<string, string>>[],
  options: DropPartitionsOptions = {},
): Promise<DropPartitionsSummary> {
  const keys = ctx.schema.partitionKeys;
  if (keys.length === 0) throw new CommitInputError(`table ${ctx.location} is not partitioned: it has no partitions to drop`);
  if (specs.length === 0) throw new CommitInputError('dropping partitions needs at least one partition spec');
  for (const spec of specs) {
    if (Object.keys(spec).length === 0) throw new CommitInputError('a partition spec to drop must name at least one partition key');
    for (const k of Object.keys(spec)) {
      if (!keys.includes(k))
        throw new CommitInputError(
          `partition spec names '${k}', which is not a partition key of ${ctx.location} (partition keys: ${keys.join(', ')})`,
        );
    }
  }
  const latest = await new SnapshotManager(ctx.fileIO, ctx.paths).latest();
  const all = latest === null ? [] : await listPartitionEntries(ctx, latest, options);
  const matches = (e: PartitionEntry, spec: Readonly<Record<string, string>>): boolean =>
    Object.entries(spec).every(([k, v]) => e.spec[k] === v);
  for (const spec of specs) {
    if (!all.some((e) => matches(e, spec))) {
      const shown = all.slice(0, 10).map((e) => e.path);
      const text = Object.entries(spec)
        .map(([k, v]) => `${k}=${v}`)
        .join('/');
      throw new PartitionNotFoundError(
        `no partition of ${ctx.location} matches '${text}'` +
          (all.length === 0
            ? ' (the table has no data)'
            : `; partitions: ${shown.join(', ')}${all.length > shown.length ? `, … (${all.length} in all)` : ''}`),
      );
    }
  }
  return commitPartitionDrop(
    ctx,
    latest,
    all.filter((e) => specs.some((spec) => matches(e, spec))),
    options,
  );
}
