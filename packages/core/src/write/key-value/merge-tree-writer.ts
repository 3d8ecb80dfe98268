/**
 * The writer of one (partition, bucket) of a primary-key table, as Java's `MergeTreeWriter`:
 * incoming records get increasing sequence numbers, wait in a write buffer, and on flush are
 * sorted by key (then `sequence.field`, then sequence number), merged per key by the table's merge
 * engine and written as one sorted run of level-0 files. A {@link CompactManager} sees every flush
 * and contributes compaction results at commit.
 */
import type * as arrow from 'apache-arrow';
import { FILE_SOURCE_APPEND, type DataField, type DataFileMeta, type IndexFileMeta, type TableSchema } from '@tidemark/format';
import type { CoreOptions } from '../../core-options.js';
import { isRetraction, type MergeEngineOptions } from '../../read/merge-engine.js';
import { dataByteSize } from '../arrow-columns.js';
import { KeyValueFileWriter } from './key-value-file-writer.js';
import { trimmedKeyFields } from './key-value.js';
import { KeyValueSortBuffer, type SortedKeyValues } from './sort-buffer.js';
import { withExtraFiles } from '../../file-index/data-file-index-writer.js';

/** Files a compaction replaced and produced, committed with the writer's new files. */
export interface CompactionResult {
  readonly compactBefore: readonly DataFileMeta[];
  readonly compactAfter: readonly DataFileMeta[];
  /** Deletion-vector tables: the bucket's new DV index file (Java `CompactIncrement.newIndexFiles`). */
  readonly newIndexFiles?: readonly IndexFileMeta[];
  /** The DV index file it replaces. */
  readonly deletedIndexFiles?: readonly IndexFileMeta[];
  /** Changelog files the compactions produced (`changelog-producer` = `lookup` / `full-compaction`). */
  readonly compactChangelog?: readonly DataFileMeta[];
}

/**
 * The compaction hook of a merge-tree writer (Java's `CompactManager`). The default does nothing;
 * universal compaction plugs in here.
 */
export interface CompactManager {
  /** Called after each flush with the new level-0 files, in flush order. */
  onFlush(levelZeroFiles: readonly DataFileMeta[]): Promise<void>;
  /** Called by `prepareCommit`: the compaction to commit with this commit's new files. */
  prepareCommit(): Promise<CompactionResult>;
  /** Called when the writer is aborted: delete compaction outputs not handed out. */
  abort?(): Promise<void>;
  /**
   * Opens the bucket's levels from the table now rather than at the first flush, so that the next
   * `prepareCommit` compacts what the table needs compacted at commit even without new data.
   */
  restore?(): Promise<void>;
}

/** A {@link CompactManager} that never compacts (`write-only` writers, tests). */
export const NO_COMPACTION: CompactManager = {
  onFlush: async () => undefined,
  prepareCommit: async () => ({ compactBefore: [], compactAfter: [] }),
};

/** What one (partition, bucket) contributes to a commit. */
export interface MergeTreeCommit extends CompactionResult {
  readonly newFiles: readonly DataFileMeta[];
  /** Changelog files of the flushes (`changelog-producer` = `input`); empty otherwise. */
  readonly newChangelogFiles: readonly DataFileMeta[];
}

/** Settings of a {@link MergeTreeWriter}. */
export interface MergeTreeWriterOptions {
  readonly fileIO: KeyValueFileWriterSettings['fileIO'];
  readonly schema: TableSchema;
  readonly options: CoreOptions;
  readonly merge: MergeEngineOptions;
  readonly pathOf: (fileName: string) => string;
  readonly newFileName: () => string;
  /** First sequence number of the bucket: its highest live `_MAX_SEQUENCE_NUMBER` + 1 (asked once, at the first flush). */
  readonly startSequence: () => Promise<bigint>;
  readonly compactManager?: CompactManager;
  /**
   * `changelog-producer` = `input`: each flush also writes the buffered records unmerged, in key
   * order with their row kinds, to level-0 changelog files named by this function (Java's
   * `MergeTreeWriter` with an input changelog writer).
   */
  readonly newChangelogFileName?: () => string;
  readonly now?: () => number;
  readonly beforeFile?: () => Promise<void>;
}

type KeyValueFileWriterSettings = ConstructorParameters<typeof KeyValueFileWriter>[0];

interface Buffered {
  readonly columns: readonly arrow.Data[];
  readonly kinds: Int8Array;
  readonly rows: number;
}

/**
 * Memory a buffered record costs at the flush beyond its Arrow bytes, counted against
 * `write-buffer-size` so the budget bounds real memory: its normalized key words, the sort's
 * record numbers and scratch, the merge's output, and its share of the gathered file slice
 * (about 50 bytes for a BIGINT key; the figure stays generous for wide and string keys).
 */
export const MERGE_RECORD_OVERHEAD_BYTES = 160;

/** Rows per slice handed to the file writer (bounds the size of one gathered batch). */
const FLUSH_SLICE_ROWS = 65_536;

/** Merge-tree writer of one (partition, bucket). */
export class MergeTreeWriter {
  private buffer: Buffered[] = [];
  private bytes = 0;
  private nextSequence: bigint | undefined;
  private newFiles: DataFileMeta[] = [];
  private newChangelogFiles: DataFileMeta[] = [];
  private readonly keyFields: DataField[];
  private readonly sequenceFields: DataField[];
  private readonly compactManager: CompactManager;

  constructor(private readonly settings: MergeTreeWriterOptions) {
    const { schema, merge } = settings;
    this.keyFields = trimmedKeyFields(schema);
    this.sequenceFields = (merge.sequenceFields ?? []).map((n) => schema.fields.find((f) => f.name === n)!);
    this.compactManager = settings.compactManager ?? NO_COMPACTION;
  }

  /** Bytes of buffered Arrow data. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /**
   * Buffers records: the table's columns (schema order) and one row kind per row. Sequence
   * numbers are given in arrival order at the flush. Retractions are dropped under
   * `ignore-delete`, as Java's writer does.
   */
  write(columns: readonly arrow.Data[], kinds: Int8Array): void {
    if (kinds.length === 0) return;
    if (this.settings.merge.ignoreDelete && kinds.some((k) => isRetraction(k))) {
      const keep: number[] = [];
      kinds.forEach((k, i) => {
        if (!isRetraction(k)) keep.push(i);
      });
      if (keep.length === 0) return;
      // Runs of kept rows become zero-copy slices.
      let start = 0;
      while (start < keep.length) {
        let end = start + 1;
        while (end < keep.length && keep[end] === keep[end - 1]! + 1) end++;
        const from = keep[start]!;
        const n = end - start;
        this.push(
          columns.map((c) => c.slice(from, n)),
          kinds.subarray(from, from + n),
        );
        start = end;
      }
      return;
    }
    this.push(columns, kinds);
  }

  private push(columns: readonly arrow.Data[], kinds: Int8Array): void {
    let size = kinds.length * (9 + MERGE_RECORD_OVERHEAD_BYTES);
    for (const c of columns) size += dataByteSize(c);
    this.buffer.push({ columns, kinds, rows: kinds.length });
    this.bytes += size;
  }

  /** Merges the buffer and writes it as level-0 files (one sorted run); returns them. */
  async flush(): Promise<DataFileMeta[]> {
    if (this.buffer.length === 0) return [];
    const buffered = this.buffer;
    this.buffer = [];
    this.bytes = 0;
    if (this.nextSequence === undefined) this.nextSequence = await this.settings.startSequence();
    const { schema, merge } = this.settings;
    const held = new KeyValueSortBuffer(schema.fields, this.keyFields, this.sequenceFields, merge.sequenceDescending ?? false);
    for (const b of buffered) held.add(b.columns, b.kinds);
    const sorted = held.sort(this.nextSequence);
    this.nextSequence += BigInt(held.size);
    const merged = sorted.merge(merge);
    if (this.settings.newChangelogFileName) await this.writeChangelog(sorted);
    const writer = new KeyValueFileWriter({
      fileIO: this.settings.fileIO,
      schema,
      options: this.settings.options,
      pathOf: this.settings.pathOf,
      newFileName: this.settings.newFileName,
      level: 0,
      fileSource: FILE_SOURCE_APPEND,
      ...(this.settings.now ? { now: this.settings.now } : {}),
      ...(this.settings.beforeFile ? { beforeFile: this.settings.beforeFile } : {}),
    });
    try {
      for (let start = 0; start < merged.length; start += FLUSH_SLICE_ROWS) {
        const end = Math.min(merged.length, start + FLUSH_SLICE_ROWS);
        await writer.write({
          columns: merged.columns(start, end),
          sequence: merged.sequences(start, end),
          kinds: merged.kinds(start, end),
        });
      }
      const files = await writer.close();
      this.newFiles.push(...files);
      await this.compactManager.onFlush(files);
      return files;
    } catch (e) {
      await writer.abort().catch(() => undefined);
      throw e;
    }
  }

  /** Writes the sorted, unmerged records of a flush as changelog files. */
  private async writeChangelog(sorted: SortedKeyValues): Promise<void> {
    const writer = new KeyValueFileWriter({
      fileIO: this.settings.fileIO,
      schema: this.settings.schema,
      options: this.settings.options,
      pathOf: this.settings.pathOf,
      newFileName: this.settings.newChangelogFileName!,
      level: 0,
      fileSource: FILE_SOURCE_APPEND,
      ...(this.settings.now ? { now: this.settings.now } : {}),
      ...(this.settings.beforeFile ? { beforeFile: this.settings.beforeFile } : {}),
    });
    try {
      for (let start = 0; start < sorted.length; start += FLUSH_SLICE_ROWS) {
        await writer.write(sorted.slice(start, Math.min(sorted.length, start + FLUSH_SLICE_ROWS)));
      }
      this.newChangelogFiles.push(...(await writer.close()));
    } catch (e) {
      await writer.abort().catch(() => undefined);
      throw e;
    }
  }

  /** Flushes the buffer and hands out the new files and compaction results since the last call. */
  async prepareCommit(): Promise<MergeTreeCommit> {
    await this.flush();
    const compaction = await this.compactManager.prepareCommit();
    const newFiles = this.newFiles;
    const newChangelogFiles = this.newChangelogFiles;
    this.newFiles = [];
    this.newChangelogFiles = [];
    return { newFiles, newChangelogFiles, ...compaction };
  }

  /** See {@link CompactManager.restore}. */
  async restoreCompaction(): Promise<void> {
    await this.compactManager.restore?.();
  }

  /** Deletes the files written since the last {@link prepareCommit} and drops buffered rows. */
  async abort(): Promise<void> {
    this.buffer = [];
    this.bytes = 0;
    const paths = [...this.newFiles, ...this.newChangelogFiles].flatMap((f) => withExtraFiles(this.settings.pathOf(f.fileName), f));
    this.newFiles = [];
    this.newChangelogFiles = [];
    await this.settings.fileIO.deleteMany(paths);
    await this.compactManager.abort?.();
  }
}
