import type { DataFileMeta, IndexFileMeta } from '@tidemark/format';

/**
 * What a writer hands to the committer for one (partition, bucket): the files it created and, for
 * compaction or overwrite, the files it replaces. A commit message makes nothing visible by itself.
 */
export interface CommitMessage {
  /** Serialized partition BinaryRow (with the 4-byte arity prefix), exactly as stored in manifests. */
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** Bucket count of the table when written (`-1` for bucket-unaware append tables). */
  readonly totalBuckets: number;
  /** New data files (become ADD entries). */
  readonly newFiles: readonly DataFileMeta[];
  /**
   * Changelog files written with the new files (`changelog-producer` = `input`; Java
   * `DataIncrement.newChangelogFiles`): they go to the changelog manifest list of the APPEND
   * snapshot and live next to the data files of the bucket.
   */
  readonly newChangelogFiles?: readonly DataFileMeta[];
  /** Files removed by this change outside compaction (become DELETE entries). */
  readonly deletedFiles?: readonly DataFileMeta[];
  /** Compaction inputs (DELETE entries of a COMPACT snapshot). */
  readonly compactBefore?: readonly DataFileMeta[];
  /** Compaction outputs (ADD entries of a COMPACT snapshot). */
  readonly compactAfter?: readonly DataFileMeta[];
  /**
   * Changelog files the compaction produced (`changelog-producer` = `lookup` or
   * `full-compaction`; Java `CompactIncrement.changelogFiles`): they go to the changelog manifest
   * list of the COMPACT snapshot and live next to the data files of the bucket.
   */
  readonly compactChangelogFiles?: readonly DataFileMeta[];
  /**
   * Index files of this (partition, bucket) the change adds (Java `DataIncrement.newIndexFiles`):
   * the bucket's rewritten hash index in dynamic-bucket tables, deletion vectors. Each replaces
   * the live index file of the same type in this bucket (deletion vectors of bucket-unaware
   * tables are kept per file).
   */
  readonly newIndexFiles?: readonly IndexFileMeta[];
  /**
   * Index files the change removes (Java `DataIncrement.deletedIndexFiles`). For a hash index:
   * the file the bucket's new index was built from, which tells the commit which hashes it added.
   */
  readonly deletedIndexFiles?: readonly IndexFileMeta[];
  /**
   * Index files the compaction of this (partition, bucket) adds (Java
   * `CompactIncrement.newIndexFiles`): the bucket's rewritten deletion vectors. They go to the
   * COMPACT snapshot with `compactBefore` / `compactAfter`.
   */
  readonly compactNewIndexFiles?: readonly IndexFileMeta[];
  /** Index files the compaction replaces (Java `CompactIncrement.deletedIndexFiles`). */
  readonly compactDeletedIndexFiles?: readonly IndexFileMeta[];
  /**
   * Dynamic-bucket tables: id of the snapshot whose hash index the bucket assignment of this
   * partition used (null: the table had no snapshot). The commit checks the hash index changes
   * committed since then; omitted, it checks against every hash index file of the partition.
   */
  readonly indexBaseSnapshotId?: number | null;
}

/** A batch of commit messages committed together under one identifier. */
export interface Committable {
  /** Strictly increasing per commitUser; batch writes use Long.MAX (9223372036854775807n). */
  readonly identifier: bigint;
  readonly messages: readonly CommitMessage[];
  /** Optional watermark carried into the snapshot. */
  readonly watermark?: bigint;
  /** Optional snapshot `properties` (e.g. source offsets of a sink). */
  readonly properties?: Readonly<Record<string, string>>;
}
