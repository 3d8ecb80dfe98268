/**
 * What the append writer and the key-value writer of a table share (Java's
 * `AbstractFileStoreWrite` / `MemoryFileStoreWrite`): one slot per (partition, bucket) with its
 * buffered bytes, the memory budget over all of them, the file names of one writer, the in-flight
 * record that protects those files from orphan cleanup, the first sequence number of each bucket,
 * and the rule that a failure after rows left the buffers leaves the writer unusable.
 *
 * Orphan-file protection: all data files of one writer are named `<data-file.prefix><uuid>-<n>`
 * with one uuid per writer, and before its first file the writer records that prefix in
 * `inflight/write-<uuid>.json` (inflight.ts). Orphan cleanup never deletes a file matching a
 * recorded prefix, so files that exist before the snapshot referencing them are safe whatever the
 * cleanup's `olderThan`.
 */
import { randomUUID } from 'node:crypto';
import type * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import { INDEX_FILE_PREFIX, serializeBinaryRow, type DataType, type TableSchema, type Value } from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import type { CoreOptions } from '../core-options.js';
import { INFLIGHT_RECORD_REFRESH_MS, clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import type { FileStorePathFactory } from '../path-factory.js';
import type { TableContext } from '../table-context.js';
import type { BucketAssigner } from './key-value/bucket-assigner.js';
import { partKey } from './row-router.js';
import type { TableWriteOptions } from './table-write-options.js';
import { WriteValidationError } from './write-errors.js';
import { withExtraFiles } from '../file-index/data-file-index-writer.js';

/** What every (partition, bucket) slot of a writer holds. */
export interface BucketSlot {
  readonly key: string;
  /** The partition as BinaryRow bytes (as manifests store it). */
  readonly partition: Uint8Array;
  readonly partitionDir: string;
  readonly bucket: number;
  /** Bytes buffered, counted against the memory budget. */
  bytes: number;
}

/** Data files uploaded at once (of different buckets). */
export const MAX_UPLOADS = 8;

/** The writer of the files of one table: append or key-value, see the subclasses. */
export abstract class FileStoreWrite<S extends BucketSlot = BucketSlot> {
  protected readonly context: TableContext;
  protected readonly options: CoreOptions;
  protected readonly paths: FileStorePathFactory;
  protected readonly fileIO: FileIO;
  protected readonly schema: TableSchema;
  protected readonly writeOptions: TableWriteOptions;
  protected readonly slots = new Map<string, S>();
  /** Bytes buffered over all slots. */
  protected buffered = 0;
  protected readonly budget: number;
  /** A failure after rows left the buffers: every later call throws it. */
  protected failure: unknown;
  /** One uuid per writer: every data file name starts with {@link filePrefix}. */
  private readonly uuid = randomUUID();
  private fileCounter = 0;
  private indexFileCounter = 0;
  /** When the in-flight record was (re)written, epoch millis; null while there is none. */
  private recordedAt: number | null = null;
  private recording: Promise<void> | null = null;

  /**
   * @param partitionTypes types of the partition columns (to name a partition's directory)
   * @param assigner dynamic buckets: the assigner, whose own files the in-flight record covers too
   */
  constructor(
    context: TableContext,
    writeOptions: TableWriteOptions,
    private readonly partitionTypes: readonly DataType[],
    protected readonly assigner: BucketAssigner | null,
  ) {
    this.context = context;
    this.options = context.options;
    this.paths = context.paths;
    this.fileIO = context.fileIO;
    this.schema = context.schema;
    this.writeOptions = writeOptions;
    this.budget = writeOptions.memoryBudget ?? this.options.writeBufferSize;
  }

  /** Buffers the rows of one (partition, bucket). */
  abstract write(part: Value[], bucket: number, batch: arrow.RecordBatch): void;

  /** Writes files where buffers are full or memory runs short. */
  abstract flushIfNeeded(): Promise<void>;

  /** Writes all buffered rows and returns one message per (partition, bucket) with the files created since the last call. */
  abstract prepareCommit(): Promise<CommitMessage[]>;

  /** Deletes the files written since the last {@link prepareCommit} and discards buffered rows. */
  abstract abort(): Promise<void>;

  /** Discards buffered rows once every file started is written (the in-flight record stays). */
  abstract close(): Promise<void>;

  /** A slot of a new (partition, bucket), from its common part. */
  protected abstract newSlot(common: BucketSlot): S;

  /** Name prefix of every data file of this writer (`<data-file.prefix><uuid>-`). */
  get filePrefix(): string {
    return `${this.options.dataFilePrefix}${this.uuid}-`;
  }

  /** Name prefix of the index files this writer writes itself (deletion vectors): `index-<uuid>-`. */
  get indexFilePrefix(): string {
    return `${INDEX_FILE_PREFIX}${this.uuid}-`;
  }

  /** Name prefix of every changelog file of this writer (`<changelog-file.prefix><uuid>-`). */
  get changelogFilePrefix(): string {
    return `${this.options.changelogFilePrefix}${this.uuid}-`;
  }

  /** Id of this writer's in-flight record (`inflight/<id>.json`). */
  get inflightRecordId(): string {
    return `write-${this.uuid}`;
  }

  /** Id of the in-flight record while it exists (null before the first data file, and when the writer records none). */
  get recordId(): string | null {
    return this.recordedAt === null ? null : this.inflightRecordId;
  }

  /** The commit of this writer's files cleared its in-flight record: a file written afterwards records it again. */
  recordCleared(): void {
    this.recordedAt = null;
  }

  protected newDataFileName(): string {
    return `${this.filePrefix}${this.fileCounter++}.parquet`;
  }

  protected newChangelogFileName(): string {
    return `${this.changelogFilePrefix}${this.fileCounter++}.parquet`;
  }

  protected newIndexFileName(): string {
    return `${this.indexFilePrefix}${this.indexFileCounter++}`;
  }

  /** Throws the failure that left the writer unusable, if any. */
  checkFailure(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** A failure while rows are out of the buffers leaves the writer unusable (its rows are gone). */
  protected async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      this.failure = e;
      throw e;
    }
  }

  /** The slot of (`part` values, `bucket`), created when new. */
  slotOf(part: Value[], bucket: number): S {
    const key = `${bucket}|${partKey(part)}`;
    let slot = this.slots.get(key);
    if (!slot) {
      let dir: string;
      try {
        dir = this.paths.partitionPath(part);
      } catch (e) {
        throw new WriteValidationError(undefined, undefined, `cannot build the partition path: ${(e as Error).message}`);
      }
      slot = this.newSlot({ key, partition: serializeBinaryRow(this.partitionTypes, part), partitionDir: dir, bucket, bytes: 0 });
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** The slot of (`partition` as BinaryRow bytes, `bucket`), created when new. */
  protected slotAt(partition: Uint8Array, bucket: number): S {
    for (const s of this.slots.values()) if (s.bucket === bucket && Buffer.compare(s.partition, partition) === 0) return s;
    return this.slotOf(this.paths.partitionValues(partition), bucket);
  }

  /** The slot holding the most buffered bytes, or undefined when nothing is buffered. */
  protected largestSlot(): S | undefined {
    let largest: S | undefined;
    for (const s of this.slots.values()) if (!largest || s.bytes > largest.bytes) largest = s;
    return largest && largest.bytes > 0 ? largest : undefined;
  }

  /**
   * Deletes the files of `messages` that this writer wrote (data, changelog and index files), in
   * the (partition, bucket)s it knows.
   */
  async discard(messages: readonly CommitMessage[]): Promise<void> {
    const dirs = new Map<string, string>();
    for (const s of this.slots.values()) dirs.set(`${s.bucket}|${bytesKey(s.partition)}`, s.partitionDir);
    const paths: string[] = [];
    for (const m of messages) {
      const dir = dirs.get(`${m.bucket}|${bytesKey(m.partition)}`);
      if (dir === undefined) continue;
      for (const f of m.newFiles)
        if (f.fileName.startsWith(this.filePrefix)) paths.push(...withExtraFiles(this.paths.dataFilePath(dir, m.bucket, f.fileName), f));
      for (const f of [...(m.newChangelogFiles ?? []), ...(m.compactChangelogFiles ?? [])]) {
        if (f.fileName.startsWith(this.changelogFilePrefix)) paths.push(this.paths.changelogFilePath(dir, m.bucket, f.fileName));
      }
    }
    const indexPrefixes = [...(this.assigner?.inflightPrefixes?.() ?? []), this.indexFilePrefix];
    for (const m of messages) {
      for (const f of [...(m.newIndexFiles ?? []), ...(m.compactNewIndexFiles ?? [])]) {
        if (indexPrefixes.some((p) => f.fileName.startsWith(p))) paths.push(this.paths.indexFilePath(f.fileName, f.externalPath));
      }
    }
    await this.fileIO.deleteMany(paths);
  }

  /** Writes (or refreshes, when a day old) the in-flight record before a data file is written. */
  ensureRecorded(): Promise<void> {
    if (this.writeOptions.recordInflight === false) return Promise.resolve();
    const now = Date.now();
    if (this.recordedAt !== null && now - this.recordedAt < INFLIGHT_RECORD_REFRESH_MS) return Promise.resolve();
    // Callers that start it early (with a bucket's sequence planning) and the file write that
    // needs it share one write.
    this.recording ??= this.writeRecord(now).finally(() => {
      this.recording = null;
    });
    return this.recording;
  }

  /**
   * The first sequence number of a bucket, planned while the in-flight record is written: both
   * come before the bucket's first file and neither needs the other, so they share a round trip.
   * A failed record is reported by the file write that awaits it.
   */
  protected async startSequenceOf(partition: Uint8Array, bucket: number): Promise<bigint> {
    const start = this.writeOptions.startSequence;
    if (start === undefined) return 0n;
    this.ensureRecorded().catch(() => undefined);
    return BigInt(await start(partition, bucket));
  }

  private async writeRecord(now: number): Promise<void> {
    const changelog = this.options.changelogProducer !== 'none' ? [this.changelogFilePrefix] : [];
    const dv = this.options.deletionVectorsEnabled ? [this.indexFilePrefix] : [];
    const prefixes = [this.filePrefix, ...changelog, ...dv, ...(this.assigner?.inflightPrefixes?.() ?? [])];
    await recordInflightPrefixes(this.fileIO, this.context.location, this.inflightRecordId, prefixes, { now: () => now });
    this.recordedAt = now;
  }

  /** Clears the in-flight record if there is one; a failure is logged, not thrown. */
  async clearRecord(): Promise<void> {
    if (this.recordedAt === null) return;
    try {
      await clearInflightFiles(this.fileIO, this.context.location, this.inflightRecordId);
      this.recordedAt = null;
    } catch (e) {
      const message = `clearing in-flight record ${this.inflightRecordId} of ${this.context.location} failed (orphan cleanup removes it after 7 days): ${(e as Error)?.message ?? String(e)}`;
      if (this.writeOptions.logger) this.writeOptions.logger.warn(message);
      else console.warn(`[tidemark] ${message}`);
    }
  }
}

function bytesKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
