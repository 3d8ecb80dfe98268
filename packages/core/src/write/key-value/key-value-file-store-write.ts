/**
 * The writer of a primary-key table's files (Java's `KeyValueFileStoreWrite`): one
 * {@link MergeTreeWriter} per (partition, bucket) holds its records, flushes them as sorted runs
 * when memory runs short, and hands its files and compaction results to the commit.
 */
import type * as arrow from 'apache-arrow';
import type { DataType, Value } from '@tidemark/format';
import type { CommitMessage } from '../../commit-message.js';
import { mapOrdered } from '../../expire/bounded-map.js';
import type { MergeEngineOptions } from '../../read/merge-engine.js';
import type { TableContext } from '../../table-context.js';
import { batchByteSize } from '../arrow-columns.js';
import { FileStoreWrite, MAX_UPLOADS, type BucketSlot } from '../file-store-write.js';
import type { TableWriteOptions } from '../table-write-options.js';
import type { BucketAssigner } from './bucket-assigner.js';
import { MERGE_RECORD_OVERHEAD_BYTES, MergeTreeWriter, type MergeTreeCommit } from './merge-tree-writer.js';

/** A (partition, bucket) of a primary-key table: its merge-tree writer holds the buffered records. */
interface KeyValueSlot extends BucketSlot {
  readonly mergeTree: MergeTreeWriter;
}

/** Writes the data files of a primary-key table. */
export class KeyValueFileStoreWrite extends FileStoreWrite<KeyValueSlot> {
  private readonly totalBuckets: number;

  constructor(
    context: TableContext,
    writeOptions: TableWriteOptions,
    partitionTypes: readonly DataType[],
    assigner: BucketAssigner | null,
    private readonly merge: MergeEngineOptions,
  ) {
    super(context, writeOptions, partitionTypes, assigner);
    this.totalBuckets = this.options.bucket > 0 ? this.options.bucket : -1;
  }

  protected newSlot(common: BucketSlot): KeyValueSlot {
    return { ...common, mergeTree: this.newMergeTree(common.partition, common.partitionDir, common.bucket) };
  }

  /** Buffers records: the table's columns then `_VALUE_KIND` (the batch schema of primary-key tables). */
  write(part: Value[], bucket: number, batch: arrow.RecordBatch): void {
    const slot = this.slotOf(part, bucket);
    const columns = batch.data.children;
    const kinds = columns[columns.length - 1]!;
    // Arrow slices its value buffers along with the data: `values` starts at this slice's first row.
    slot.mergeTree.write(columns.slice(0, -1), (kinds.values as Int8Array).subarray(0, kinds.length));
    const size = batchByteSize(batch) + batch.numRows * MERGE_RECORD_OVERHEAD_BYTES;
    slot.bytes += size;
    this.buffered += size;
  }

  async flushIfNeeded(): Promise<void> {
    // A merge-tree bucket flushes only when memory runs short: each flush is one more sorted run.
    while (this.buffered > this.budget) {
      const largest = this.largestSlot();
      if (!largest) break;
      this.buffered -= largest.bytes;
      largest.bytes = 0;
      await this.guard(largest.mergeTree.flush());
    }
  }

  async prepareCommit(): Promise<CommitMessage[]> {
    const messages: CommitMessage[] = [];
    // Buckets flush together: a small write to several buckets uploads their files in one round
    // trip, not one per bucket.
    const prepared = mapOrdered(this.slots.values(), MAX_UPLOADS, async (slot) => {
      this.buffered -= slot.bytes;
      slot.bytes = 0;
      return { slot, c: await this.guard(slot.mergeTree.prepareCommit()) };
    });
    for await (const { slot, c } of prepared) {
      const message = commitMessageOf(slot, this.totalBuckets, c);
      if (message !== null) messages.push(message);
    }
    return messages;
  }

  async abort(): Promise<void> {
    for (const slot of this.slots.values()) {
      await slot.mergeTree.abort();
      slot.bytes = 0;
    }
    this.buffered = 0;
  }

  async close(): Promise<void> {
    this.slots.clear();
  }

  /** See `TableWrite.compactBuckets`. */
  async compactBuckets(buckets: Iterable<{ readonly partition: Uint8Array; readonly bucket: number }>): Promise<void> {
    for (const { partition, bucket } of buckets) {
      await this.slotAt(partition, bucket).mergeTree.restoreCompaction();
    }
  }

  private newMergeTree(partition: Uint8Array, partitionDir: string, bucket: number): MergeTreeWriter {
    const pathOf = (fileName: string): string => this.paths.dataFilePath(partitionDir, bucket, fileName);
    const newFileName = (): string => this.newDataFileName();
    const beforeFile = (): Promise<void> => this.ensureRecorded();
    const newChangelogFileName = (): string => this.newChangelogFileName();
    return new MergeTreeWriter({
      fileIO: this.fileIO,
      schema: this.schema,
      options: this.options,
      merge: this.merge,
      pathOf,
      newFileName,
      beforeFile,
      startSequence: () => this.startSequenceOf(partition, bucket),
      ...(this.options.changelogProducer === 'input' ? { newChangelogFileName } : {}),
      ...(this.writeOptions.now ? { now: this.writeOptions.now } : {}),
      ...(this.writeOptions.compactManager
        ? {
            compactManager: this.writeOptions.compactManager({
              table: this.context,
              merge: this.merge,
              partition,
              bucket,
              pathOf,
              newFileName,
              beforeFile,
              writeIndexFile: async (bytes) => {
                await this.ensureRecorded();
                const name = this.newIndexFileName();
                await this.fileIO.write(this.paths.indexPath(name), bytes);
                return name;
              },
              newChangelogFileName,
            }),
          }
        : {}),
    });
  }
}

/** The commit message of a bucket's merge-tree commit, or null when it changed nothing. */
function commitMessageOf(slot: KeyValueSlot, totalBuckets: number, c: MergeTreeCommit): CommitMessage | null {
  const compactChangelog = c.compactChangelog ?? [];
  const empty = c.newFiles.length === 0 && c.newChangelogFiles.length === 0 && compactChangelog.length === 0;
  const indexChanges = (c.newIndexFiles?.length ?? 0) + (c.deletedIndexFiles?.length ?? 0);
  if (empty && c.compactBefore.length === 0 && c.compactAfter.length === 0 && indexChanges === 0) return null;
  return {
    partition: slot.partition,
    bucket: slot.bucket,
    totalBuckets,
    newFiles: c.newFiles,
    ...(c.newChangelogFiles.length > 0 ? { newChangelogFiles: c.newChangelogFiles } : {}),
    ...(c.compactBefore.length > 0 ? { compactBefore: c.compactBefore } : {}),
    ...(c.compactAfter.length > 0 ? { compactAfter: c.compactAfter } : {}),
    ...(c.newIndexFiles !== undefined && c.newIndexFiles.length > 0 ? { compactNewIndexFiles: c.newIndexFiles } : {}),
    ...(c.deletedIndexFiles !== undefined && c.deletedIndexFiles.length > 0 ? { compactDeletedIndexFiles: c.deletedIndexFiles } : {}),
    ...(compactChangelog.length > 0 ? { compactChangelogFiles: compactChangelog } : {}),
  };
}
