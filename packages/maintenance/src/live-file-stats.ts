/**
 * Aggregates over the live data files of one snapshot, with memory bounded by the number of
 * partitions and buckets, never by the number of files: manifests are streamed twice. The first pass
 * reads only manifests that hold DELETE entries (their list records `numDeletedFiles`) and keeps
 * the identities those entries delete; the second pass streams every ADD entry and counts it unless
 * one of those DELETEs cancels it. File names are unique, so "ADD not deleted" is exactly the live
 * set the folding reader computes, without holding it.
 */
import {
  INDEX_TYPE_DELETION_VECTORS,
  fileEntryIdentity,
  readIndexManifest,
  readManifestEntries,
  readManifestList,
  type ManifestFileMeta,
  type Snapshot,
} from '@tidemark/format';
import { checkAborted, partitionKey, type MaintainedTable } from '@tidemark/core';
import { fileSizeBin, type FileSizeBin } from './file-size-bins.js';
import type { BucketSize, ManifestReport } from './table-report.js';

/** Running totals of one bucket. */
interface BucketAgg {
  files: number;
  bytes: number;
  rows: number;
}

/** Running totals of one partition. */
export interface PartitionAgg {
  /** Serialized partition row (for rendering its values once, at the end). */
  readonly partition: Uint8Array;
  files: number;
  bytes: number;
  rows: number;
  smallFiles: number;
  readonly histogram: number[];
  readonly buckets: Map<number, BucketAgg>;
  /** `_TOTAL_BUCKETS` of its entries (the fixed bucket count; ≤ 0 for dynamic or unaware buckets). */
  totalBuckets: number;
}

/** Result of {@link collectLiveFileStats}. */
export interface LiveFileStats {
  /** By partition key (hex of the partition row). */
  readonly partitions: Map<string, PartitionAgg>;
  files: number;
  bytes: number;
  rows: number;
  /** Rows of live files marked deleted by deletion vectors; null when a vector does not record its count. */
  deletedRows: number | null;
  smallFiles: number;
  readonly histogram: number[];
  readonly levels: Map<number, number>;
  readonly manifests: ManifestReport;
}

/**
 * Aggregates the live files of `snapshot` (an empty result for null).
 *
 * @param smallFileBytes - files below this size count as small (compaction candidates).
 */
export async function collectLiveFileStats(
  table: MaintainedTable,
  snapshot: Snapshot | null,
  bins: readonly FileSizeBin[],
  smallFileBytes: number,
  signal?: AbortSignal,
): Promise<LiveFileStats> {
  const stats = {
    partitions: new Map<string, PartitionAgg>(),
    files: 0,
    bytes: 0,
    rows: 0,
    deletedRows: 0 as number | null,
    smallFiles: 0,
    histogram: bins.map(() => 0),
    levels: new Map<number, number>(),
  };
  if (snapshot === null) {
    return { ...stats, manifests: { count: 0, bytes: 0, entries: 0, deleteEntries: 0, listBytes: 0 } };
  }
  const io = table.fileIO;
  const paths = table.paths;
  const [base, delta] = await Promise.all([
    readManifestList(io, paths.manifestPath(snapshot.baseManifestList)),
    readManifestList(io, paths.manifestPath(snapshot.deltaManifestList)),
  ]);
  const manifests: ManifestFileMeta[] = [...base, ...delta];
  const listBytes = await listSizes(table, snapshot);

  // Pass 1: identities deleted by later manifests (a count, in case a file is added twice at the same level).
  const deleted = new Map<string, number>();
  for (const m of manifests) {
    if (m.numDeletedFiles === 0) continue;
    checkAborted(signal);
    for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
      if (e.kind !== 'DELETE') continue;
      const id = fileEntryIdentity(e);
      deleted.set(id, (deleted.get(id) ?? 0) + 1);
    }
  }

  // Pass 2: every ADD that no DELETE cancels is live.
  let entries = 0;
  let deleteEntries = 0;
  for (const m of manifests) {
    checkAborted(signal);
    for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
      entries++;
      if (e.kind === 'DELETE') {
        deleteEntries++;
        continue;
      }
      if (deleted.size > 0) {
        const id = fileEntryIdentity(e);
        const n = deleted.get(id);
        if (n !== undefined) {
          if (n <= 1) deleted.delete(id);
          else deleted.set(id, n - 1);
          continue;
        }
      }
      const size = e.file.fileSize;
      const rows = e.file.rowCount;
      const bin = fileSizeBin(bins, size);
      const small = size < smallFileBytes ? 1 : 0;
      const key = partitionKey(e.partition);
      let p = stats.partitions.get(key);
      if (p === undefined) {
        p = {
          partition: e.partition,
          files: 0,
          bytes: 0,
          rows: 0,
          smallFiles: 0,
          histogram: bins.map(() => 0),
          buckets: new Map(),
          totalBuckets: e.totalBuckets,
        };
        stats.partitions.set(key, p);
      }
      p.files++;
      p.bytes += size;
      p.rows += rows;
      p.smallFiles += small;
      p.histogram[bin]!++;
      p.totalBuckets = Math.max(p.totalBuckets, e.totalBuckets);
      let b = p.buckets.get(e.bucket);
      if (b === undefined) p.buckets.set(e.bucket, (b = { files: 0, bytes: 0, rows: 0 }));
      b.files++;
      b.bytes += size;
      b.rows += rows;
      stats.files++;
      stats.bytes += size;
      stats.rows += rows;
      stats.smallFiles += small;
      stats.histogram[bin]!++;
      stats.levels.set(e.file.level, (stats.levels.get(e.file.level) ?? 0) + 1);
    }
  }
  stats.deletedRows = await deletedRowCount(table, snapshot);
  return {
    ...stats,
    manifests: {
      count: manifests.length,
      bytes: manifests.reduce((s, m) => s + m.fileSize, 0),
      entries,
      deleteEntries,
      listBytes,
    },
  };
}

/**
 * Rows the snapshot's deletion vectors mark deleted (their recorded cardinalities; the index holds
 * vectors of live files only), or null when a vector written before Paimon recorded counts has none.
 */
async function deletedRowCount(table: MaintainedTable, s: Snapshot): Promise<number | null> {
  if (s.indexManifest === undefined) return 0;
  let deleted = 0;
  for (const e of await readIndexManifest(table.fileIO, table.paths.manifestPath(s.indexManifest))) {
    if (e.kind !== 'ADD' || e.indexType !== INDEX_TYPE_DELETION_VECTORS) continue;
    for (const r of e.dvRanges ?? []) {
      if (r.cardinality === null) return null;
      deleted += r.cardinality;
    }
  }
  return deleted;
}

/** Sizes of the snapshot's base and delta manifest lists (from the snapshot, else from the store). */
async function listSizes(table: MaintainedTable, s: Snapshot): Promise<number> {
  const size = async (name: string, recorded: number | undefined): Promise<number> =>
    recorded ?? (await table.fileIO.stat(table.paths.manifestPath(name))).size;
  return (await size(s.baseManifestList, s.baseManifestListSize)) + (await size(s.deltaManifestList, s.deltaManifestListSize));
}

/**
 * The buckets of a partition as sizes, by bucket number. With a fixed bucket count, the empty buckets
 * 0 … count-1 are listed too (as zeros): an empty bucket is skew as much as a full one.
 */
export function bucketSizes(p: PartitionAgg, fixedBuckets: number): BucketSize[] {
  const sizes = new Map<number, BucketSize>();
  if (p.totalBuckets > 0) for (let b = 0; b < fixedBuckets; b++) sizes.set(b, { bucket: b, files: 0, bytes: 0, rows: 0 });
  for (const [bucket, b] of p.buckets) sizes.set(bucket, { bucket, ...b });
  return [...sizes.values()].sort((a, b) => a.bucket - b.bucket);
}
