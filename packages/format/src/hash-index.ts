/**
 * Dynamic-bucket hash index files (`index/index-<uuid>-<n>`, index type `HASH`): for one
 * (partition, bucket) of a primary-key table with `bucket = -1`, the hash of every key the bucket
 * holds. Java Paimon writes them as bare big-endian int32 values with no header, footer or
 * checksum; the index manifest records the count as `_ROW_COUNT`.
 *
 * The hash is `BinaryRow.hashCode()` of the trimmed primary key (the primary key minus the
 * partition keys), i.e. {@link keyHash}; keys sharing a hash are treated as one key by the bucket
 * assigner, so they always share a bucket.
 */
import { encodeBinaryRow } from './binary-row.js';
import { CorruptFileError } from './errors.js';
import { INDEX_TYPE_DELETION_VECTORS, INDEX_TYPE_HASH, type DeletionVectorRange, type IndexManifestEntry } from './index-manifest.js';
import type { FileKind } from './manifest-entry.js';
import { murmurHash } from './murmur-hash.js';
import type { DataType } from './types.js';
import type { Value } from './values.js';

/** Name prefix of index files (hash and deletion-vector alike). */
export const INDEX_FILE_PREFIX = 'index-';

/** One index file as a writer reports it (Java `IndexFileMeta`): an index manifest entry without kind, partition and bucket. */
export type IndexFileMeta = Omit<IndexManifestEntry, 'kind' | 'partition' | 'bucket'>;

/** Name of the `n`-th index file of a writer whose file names share `uuid`. */
export function indexFileName(uuid: string, n: number): string {
  return `${INDEX_FILE_PREFIX}${uuid}-${n}`;
}

/** The index manifest entry recording `file` for (partition, bucket). */
export function indexManifestEntryOf(kind: FileKind, partition: Uint8Array, bucket: number, file: IndexFileMeta): IndexManifestEntry {
  // Field by field: `file` may be a whole entry, whose kind, partition and bucket must not leak in.
  return {
    kind,
    partition,
    bucket,
    indexType: file.indexType,
    fileName: file.fileName,
    fileSize: file.fileSize,
    rowCount: file.rowCount,
    dvRanges: file.dvRanges,
    externalPath: file.externalPath,
    globalIndex: file.globalIndex,
  };
}

/** `IndexFileMeta` of a hash index file Java would record (no DV ranges, no global index). */
export function hashIndexFileMeta(fileName: string, fileSize: number, rowCount: number, externalPath: string | null = null): IndexFileMeta {
  return { indexType: INDEX_TYPE_HASH, fileName, fileSize, rowCount, dvRanges: null, externalPath, globalIndex: null };
}

/**
 * `IndexFileMeta` of a deletion-vector index file as Java's `DeletionFileWriter` reports it: the
 * row count is the number of vectors, the ranges list each data file's vector in file order.
 */
export function deletionVectorsIndexFileMeta(
  fileName: string,
  fileSize: number,
  ranges: readonly DeletionVectorRange[],
  externalPath: string | null = null,
): IndexFileMeta {
  return {
    indexType: INDEX_TYPE_DELETION_VECTORS,
    fileName,
    fileSize,
    rowCount: ranges.length,
    dvRanges: [...ranges],
    externalPath,
    globalIndex: null,
  };
}

/** Hash of a key as the dynamic bucket assigner and the hash index use it: murmur hash of its BinaryRow. */
export function keyHash(types: readonly DataType[], values: readonly Value[]): number {
  return murmurHash(encodeBinaryRow(types, values));
}

/** Bytes of a hash index file holding `hashes` in the given order. */
export function encodeHashIndex(hashes: Iterable<number>): Uint8Array {
  const list = hashes instanceof Int32Array ? hashes : Int32Array.from(hashes);
  const out = new Uint8Array(list.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < list.length; i++) view.setInt32(i * 4, list[i]!, false);
  return out;
}

/**
 * The hashes of a hash index file, in file order.
 *
 * @throws CorruptFileError when the size is not a multiple of 4 or differs from the row count the
 *   index manifest recorded.
 */
export function decodeHashIndex(bytes: Uint8Array, path: string, expectedRowCount?: number): Int32Array {
  if (bytes.length % 4 !== 0) {
    throw new CorruptFileError(
      path,
      `hash index file has ${bytes.length} bytes, not a multiple of 4 (it holds big-endian int32 key hashes)`,
    );
  }
  const n = bytes.length / 4;
  if (expectedRowCount !== undefined && expectedRowCount !== n) {
    throw new CorruptFileError(
      path,
      `hash index file holds ${n} key hashes, but its index manifest entry says _ROW_COUNT ${expectedRowCount}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getInt32(i * 4, false);
  return out;
}
