/**
 * Opening the compaction rewriter of one bucket of a table: reads go through the bucket's
 * directory with each file's own schema, merged records are written as key-value files of the
 * output level (file source COMPACT).
 */
import { randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';
import {
  EMPTY_SIMPLE_STATS,
  FILE_SOURCE_COMPACT,
  keyValueFileFields,
  serializeBinaryRow,
  toArrowSchema,
  trimmedPrimaryKeys,
  writeParquetFile,
  type DataField,
  type DataFileMeta,
  type TableSchema,
} from '@tidemark/format';
import type { Table } from '../table.js';
import type { DataSplit } from '../scan/data-split.js';
import { makeBatch, takeChunks } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import { compareKeys, isRetraction } from '../read/merge-engine.js';
import { coreOptions } from '../core-options.js';
import { clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import { CompactionArgumentError } from './compact-errors.js';
import { compactionSettings } from './compaction-settings.js';
import { MergeTreeCompactRewriter, type BucketRewriter, type KeyValueSink } from './merge-tree-rewriter.js';
import type { KeyValueSegment, WindowMerge } from './merge-tree-reader.js';

/** Options of {@link openBucketRewriter}. */
export interface OpenBucketRewriterOptions {
  readonly signal?: AbortSignal;
  /** Called with each input file once it has been read through. */
  readonly onFileRead?: (file: DataFileMeta) => void;
}

/** The rewriter of one bucket (`split`) of `table`, writing with `schema` (the latest). */
export async function openBucketRewriter(table: Table, schema: TableSchema, split: DataSplit, options: OpenBucketRewriterOptions = {}): Promise<BucketRewriter> {
  const settings = compactionSettings(schema);
  const engine = coreOptions(schema).mergeEngine;
  if (engine !== 'deduplicate') {
    throw new CompactionArgumentError(`${table.location}: compaction of tables with merge engine '${engine}' is not supported yet`);
  }
  const keyNames = trimmedPrimaryKeys(schema);
  const keyFields = keyNames.map((n) => schema.fields.find((f) => f.name === n)!);
  const keyPositions = keyFields.map((k) => schema.fields.findIndex((f) => f.id === k.id));
  const filePath = (name: string): string => table.paths.dataFilePath(split.partitionPath, split.bucket, name);
  // Output files share one prefix, recorded in flight before the first is written, so that orphan
  // cleanup leaves them alone until the COMPACT snapshot references them (or the run is closed).
  const uuid = randomUUID();
  const prefix = `${coreOptions(schema).dataFilePrefix}${uuid}-`;
  const recordId = `compact-${uuid}`;
  let counter = 0;
  let recorded = false;
  const beforeFile = async (): Promise<void> => {
    if (recorded) return;
    await recordInflightPrefixes(table.fileIO, table.location, recordId, [prefix]);
    recorded = true;
  };
  const newFileName = (): string => `${prefix}${counter++}.parquet`;
  const rewriter = new MergeTreeCompactRewriter({
    read: {
      fileIO: table.fileIO,
      bucketPath: split.bucketPath,
      schemaOf: (id) => (id === schema.id ? Promise.resolve(schema) : table.schemaManager.schema(id)),
      readFields: schema.fields,
      keyPositions,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onFileRead !== undefined ? { onFileRead: options.onFileRead } : {}),
    },
    newSink: (level) => new ParquetKeyValueSink(table, schema, keyFields, keyPositions, filePath, newFileName, beforeFile, level, settings.targetFileSize),
    merge: (dropDelete) => deduplicateWindow(schema.fields, keyFields, keyPositions, dropDelete),
    deleteFiles: async (files) => {
      await table.fileIO.deleteMany(files.map((f) => filePath(f.fileName)));
    },
  }, async () => {
    if (recorded) await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
  });
  return rewriter;
}

/** Deduplicate: the last record of each key (records of a key ordered by sequence number). */
function deduplicateWindow(fields: readonly DataField[], keyFields: readonly DataField[], keyPositions: readonly number[], dropDelete: boolean): WindowMerge {
  return (segments) => {
    const recs: { key: unknown[]; seq: bigint; kind: number; chunk: number; row: number }[] = [];
    segments.forEach((s, chunk) => {
      const readers = keyPositions.map((p, j) => valueReader(s.columns[p]!, keyFields[j]!.type));
      for (let row = 0; row < s.rows; row++) recs.push({ key: readers.map((r) => r(row)), seq: s.sequence[row]!, kind: s.kinds[row]!, chunk, row });
    });
    recs.sort((a, b) => compareKeys(a.key as never, b.key as never) || (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    const keep: typeof recs = [];
    for (let i = 0; i < recs.length; i++) {
      const last = i + 1 === recs.length || compareKeys(recs[i]!.key as never, recs[i + 1]!.key as never) !== 0;
      if (last && !(dropDelete && isRetraction(recs[i]!.kind))) keep.push(recs[i]!);
    }
    if (keep.length === 0) return null;
    const indices = { chunks: Uint32Array.from(keep.map((r) => r.chunk)), rows: Uint32Array.from(keep.map((r) => r.row)) };
    const schema = toArrowSchema(fields);
    return {
      columns: fields.map((_, c) => takeChunks(segments.map((s) => s.columns[c]!), indices, schema.fields[c]!.type)),
      sequence: BigInt64Array.from(keep.map((r) => r.seq)),
      kinds: Int8Array.from(keep.map((r) => r.kind)),
      rows: keep.length,
    };
  };
}

/** Key-value Parquet files of one level, rolled at the target size. */
class ParquetKeyValueSink implements KeyValueSink {
  private pending: KeyValueSegment[] = [];
  private pendingRows = 0;
  private pendingBytes = 0;
  private readonly files: DataFileMeta[] = [];
  private readonly kvSchema: arrow.Schema;

  constructor(
    private readonly table: Table,
    private readonly schema: TableSchema,
    private readonly keyFields: readonly DataField[],
    private readonly keyPositions: readonly number[],
    private readonly path: (name: string) => string,
    private readonly newFileName: () => string,
    private readonly beforeFile: () => Promise<void>,
    private readonly level: number,
    private readonly targetSize: number,
  ) {
    this.kvSchema = toArrowSchema(keyValueFileFields(keyFields, schema.fields));
  }

  async write(rows: KeyValueSegment): Promise<void> {
    this.pending.push(rows);
    this.pendingRows += rows.rows;
    this.pendingBytes += rows.columns.reduce((s, c) => s + c.byteLength, 0);
    if (this.pendingBytes >= this.targetSize) await this.flush();
  }

  async close(): Promise<DataFileMeta[]> {
    await this.flush();
    return this.files;
  }

  async abort(): Promise<void> {
    await this.table.fileIO.deleteMany(this.files.map((f) => this.path(f.fileName))).catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.pendingRows === 0) return;
    const batches = this.pending.map((s) => {
      const columns = [
        ...this.keyPositions.map((p) => s.columns[p]!),
        arrow.makeData({ type: new arrow.Int64(), length: s.rows, data: s.sequence }),
        arrow.makeData({ type: new arrow.Int8(), length: s.rows, data: s.kinds }),
        ...s.columns,
      ];
      return makeBatch(this.kvSchema, columns, s.rows);
    });
    const first = this.pending[0]!;
    const last = this.pending[this.pending.length - 1]!;
    const keyAt = (s: KeyValueSegment, r: number) => this.keyPositions.map((p, j) => valueReader(s.columns[p]!, this.keyFields[j]!.type)(r));
    let minSeq = first.sequence[0]!;
    let maxSeq = minSeq;
    let deletes = 0;
    for (const s of this.pending) {
      for (let r = 0; r < s.rows; r++) {
        const q = s.sequence[r]!;
        if (q < minSeq) minSeq = q;
        if (q > maxSeq) maxSeq = q;
        if (isRetraction(s.kinds[r]!)) deletes++;
      }
    }
    const bytes = writeParquetFile(batches);
    const name = this.newFileName();
    await this.beforeFile();
    await this.table.fileIO.write(this.path(name), bytes);
    const keyTypes = this.keyFields.map((f) => f.type);
    this.files.push({
      fileName: name,
      fileSize: bytes.length,
      rowCount: this.pendingRows,
      minKey: serializeBinaryRow(keyTypes, keyAt(first, 0)),
      maxKey: serializeBinaryRow(keyTypes, keyAt(last, last.rows - 1)),
      keyStats: EMPTY_SIMPLE_STATS,
      valueStats: EMPTY_SIMPLE_STATS,
      minSequenceNumber: minSeq,
      maxSequenceNumber: maxSeq,
      schemaId: this.schema.id,
      level: this.level,
      extraFiles: [],
      creationTime: Date.now(),
      deleteRowCount: deletes,
      embeddedIndex: null,
      fileSource: FILE_SOURCE_COMPACT,
      valueStatsCols: null,
      externalPath: null,
      firstRowId: null,
      writeCols: null,
      writeColsSequences: null,
    });
    this.pending = [];
    this.pendingRows = 0;
    this.pendingBytes = 0;
  }
}
