/**
 * Each partition of a snapshot with its record count, file count, size and last file creation:
 * Paimon's `PartitionEntry` (what the `$partitions` system table shows and what partition
 * expiration chooses from). The entries of the snapshot's manifests are summed per partition as
 * they stream by (an ADD counts +1 file and + its rows and bytes, a DELETE −1 and minus them), so
 * memory grows with the number of partitions, not of files.
 */
import type { Snapshot } from '@tidemark/format';
import { dataManifests, manifestEntries, partitionKey } from '../commit/manifest-fold.js';
import { checkAborted } from '../expire/table-files.js';
import type { TableContext } from '../table-context.js';

/** One partition of a snapshot. */
export interface PartitionEntry {
  /** The serialized partition row (BinaryRow), as in manifest entries. */
  readonly partition: Uint8Array;
  /** Partition values as in directory names, by key (escapes undone). */
  readonly spec: Readonly<Record<string, string>>;
  /** Relative partition directory without trailing slash, e.g. `dt=2024-03-05`. */
  readonly path: string;
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  readonly fileCount: number;
  /**
   * Creation time (epoch milliseconds) of the newest file of the partition, as Java's
   * `creationTimeEpochMillis` reads a file's local `_CREATION_TIME` in this machine's zone; null
   * when a file of the partition has no creation time (its age is unknown).
   */
  readonly lastFileCreationTime: number | null;
  /** Bucket count of the partition's newest entry (null when the manifests do not say). */
  readonly totalBuckets: number | null;
}

interface Sum {
  partition: Uint8Array;
  recordCount: number;
  fileSizeInBytes: number;
  fileCount: number;
  lastFileCreationTime: number;
  unknownCreationTime: boolean;
  totalBuckets: number | null;
}

/** Epoch milliseconds of a local wall-clock time stored as if UTC (Java `LocalDateTime.atZone(systemDefault())`). */
export function localToEpochMillis(localMillis: number): number {
  // The offset at the local instant itself; evaluated twice so a DST change in between is honoured.
  const first = localMillis + new Date(localMillis).getTimezoneOffset() * 60_000;
  return localMillis + new Date(first).getTimezoneOffset() * 60_000;
}

/** The local wall-clock time of an instant, stored as if UTC (Java `LocalDateTime.now()`). */
export function epochToLocalMillis(epochMillis: number): number {
  return epochMillis - new Date(epochMillis).getTimezoneOffset() * 60_000;
}

/**
 * The partitions holding files in `snapshot`, sorted by directory name; partitions whose files
 * were all deleted are left out, as in Java.
 */
export async function listPartitionEntries(
  ctx: TableContext,
  snapshot: Snapshot,
  options: { readonly signal?: AbortSignal } = {},
): Promise<PartitionEntry[]> {
  const sums = new Map<string, Sum>();
  const manifests = await dataManifests(ctx.fileIO, ctx.paths, snapshot);
  let seen = 0;
  for await (const e of manifestEntries(ctx.fileIO, ctx.paths, manifests)) {
    if ((++seen & 1023) === 0) checkAborted(options.signal);
    const key = partitionKey(e.partition);
    let s = sums.get(key);
    if (s === undefined) {
      s = {
        partition: e.partition,
        recordCount: 0,
        fileSizeInBytes: 0,
        fileCount: 0,
        lastFileCreationTime: Number.NEGATIVE_INFINITY,
        unknownCreationTime: false,
        totalBuckets: null,
      };
      sums.set(key, s);
    }
    const sign = e.kind === 'ADD' ? 1 : -1;
    s.recordCount += sign * e.file.rowCount;
    s.fileSizeInBytes += sign * e.file.fileSize;
    s.fileCount += sign;
    if (e.file.creationTime === null) {
      if (e.kind === 'ADD') s.unknownCreationTime = true;
    } else s.lastFileCreationTime = Math.max(s.lastFileCreationTime, localToEpochMillis(e.file.creationTime));
    if (e.totalBuckets !== null && e.totalBuckets !== undefined) s.totalBuckets = e.totalBuckets;
  }
  checkAborted(options.signal);
  const out: PartitionEntry[] = [];
  for (const s of sums.values()) {
    if (s.fileCount <= 0) continue;
    out.push({
      partition: s.partition,
      spec: ctx.paths.partitionSpec(s.partition),
      path: ctx.paths.partitionPath(s.partition).replace(/\/$/, ''),
      recordCount: s.recordCount,
      fileSizeInBytes: s.fileSizeInBytes,
      fileCount: s.fileCount,
      lastFileCreationTime: s.unknownCreationTime || s.lastFileCreationTime === Number.NEGATIVE_INFINITY ? null : s.lastFileCreationTime,
      totalBuckets: s.totalBuckets,
    });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
