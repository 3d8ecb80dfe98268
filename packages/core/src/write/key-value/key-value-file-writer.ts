/**
 * Writes a key-sorted stream of primary-key records into rolling Parquet data files in the layout
 * Java Paimon writes: `_KEY_<k>` columns for the trimmed primary key, `_SEQUENCE_NUMBER`,
 * `_VALUE_KIND`, then every table column, with Java's field ids; and fills each file's
 * {@link DataFileMeta} as Java's `KeyValueDataFileWriter` does (min/max key, full key statistics,
 * value statistics per `metadata.stats-mode`, sequence range, delete row count, level, source).
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import {
  FILE_SOURCE_APPEND,
  FILE_SOURCE_COMPACT,
  encodeParquetRowGroupsAsync,
  keyValueFileFields,
  keyValuePlainColumns,
  serializeBinaryRow,
  toArrowSchema,
  type DataField,
  type DataFileMeta,
  type ParquetCompression,
  type TableSchema,
  type Value,
} from '@tidemark/format';
import { coreOptions, type CoreOptions } from '../../core-options.js';
import { makeBatch } from '../../read/arrow-take.js';
import { valueReader } from '../../read/arrow-values.js';
import { isRetraction } from '../../read/merge-engine.js';
import { dataByteSize } from '../arrow-columns.js';
import { creationTimeOf, parquetCompressionOf } from '../file-format.js';
import { FileSizeEstimate } from '../file-size-estimate.js';
import { FileStatsCollector } from '../value-stats.js';
import { DataFileIndexWriter, NO_FILE_INDEX, withExtraFiles } from '../../file-index/data-file-index-writer.js';
import { fileIndexSettings, type FileIndexSettings } from '../../file-index/file-index-options.js';
import { keyValueColumns, trimmedKeyFields, type KeyValue, type KeyValueColumns } from './key-value.js';

/** `_FILE_SOURCE`: 0 for files a writer flushed, 1 for compaction output. */
export type FileSource = typeof FILE_SOURCE_APPEND | typeof FILE_SOURCE_COMPACT;

/** Settings of a {@link KeyValueFileWriter}. */
export interface KeyValueFileWriterOptions {
  readonly fileIO: FileIO;
  /** Schema the files are written with (`_SCHEMA_ID`). */
  readonly schema: TableSchema;
  /** Table options (default: the schema's {@link coreOptions}). */
  readonly options?: CoreOptions;
  /** Full path of a data file of the bucket from its name. */
  readonly pathOf: (fileName: string) => string;
  /** A fresh data file name (`data-<uuid>-<n>.parquet`). */
  readonly newFileName: () => string;
  /** LSM level of the files (0 for flushed write buffers). */
  readonly level: number;
  readonly fileSource: FileSource;
  /** Roll at this many bytes (default option `target-file-size`). */
  readonly targetFileSize?: number;
  /** Clock for `_CREATION_TIME` (epoch millis); default `Date.now`. */
  readonly now?: () => number;
  /** Awaited before each data file is written (e.g. to record the in-flight file prefix). */
  readonly beforeFile?: () => Promise<void>;
}

interface Piece extends KeyValueColumns {
  readonly rows: number;
  readonly bytes: number;
}

/**
 * Rolling writer of primary-key data files. Feed records in key order (then sequence order for
 * equal keys) with {@link write}; {@link close} writes the rest and returns the files' metadata.
 */
export class KeyValueFileWriter {
  private readonly options: CoreOptions;
  private readonly compression: ParquetCompression;
  private readonly keyFields: DataField[];
  private readonly keyPositions: number[];
  private readonly fileSchema: arrow.Schema;
  private readonly valueSchema: arrow.Schema;
  private readonly target: number;
  /**
   * Columns whose values are distinct within a file (`keyValuePlainColumns`): a dictionary of
   * them is built only to be dropped, and a one-row read would decode it whole.
   */
  private readonly plainColumns: readonly string[];
  /** The data-file index each file gets (`file-index.bloom-filter.columns`), or null. */
  private readonly fileIndex: FileIndexSettings | null;
  private pending: Piece[] = [];
  private pendingRows = 0;
  private pendingBytes = 0;
  private readonly estimate = new FileSizeEstimate();
  private readonly files: DataFileMeta[] = [];
  private closed = false;

  constructor(private readonly settings: KeyValueFileWriterOptions) {
    const { schema } = settings;
    this.options = settings.options ?? coreOptions(schema);
    this.compression = parquetCompressionOf(this.options);
    this.keyFields = trimmedKeyFields(schema);
    this.plainColumns = keyValuePlainColumns(this.keyFields);
    this.keyPositions = this.keyFields.map((k) => schema.fields.findIndex((f) => f.id === k.id));
    this.fileSchema = toArrowSchema(keyValueFileFields(this.keyFields, schema.fields));
    this.valueSchema = toArrowSchema(schema.fields);
    this.target = settings.targetFileSize ?? this.options.targetFileSize;
    this.fileIndex = fileIndexSettings(schema, this.options);
  }

  /** Files completed so far (all of them after {@link close}). */
  get writtenFiles(): readonly DataFileMeta[] {
    return this.files;
  }

  /**
   * Adds records given as the table's columns (schema order) with their sequence numbers and row
   * kinds; writes a file each time the buffered rows reach `target-file-size`.
   */
  async write(records: KeyValueColumns): Promise<void> {
    if (this.closed) throw new TypeError('KeyValueFileWriter is closed');
    const rows = records.sequence.length;
    if (rows === 0) return;
    let bytes = rows * 9;
    for (const c of records.columns) bytes += dataByteSize(c);
    this.pending.push({ ...records, rows, bytes });
    this.pendingRows += rows;
    this.pendingBytes += bytes;
    while (this.pendingRows > 1 && this.estimate.fileBytes(this.pendingBytes) >= this.target) {
      const perRow = this.estimate.fileBytes(this.pendingBytes) / this.pendingRows;
      await this.writeFile(Math.max(1, Math.min(this.pendingRows, Math.floor(this.target / perRow))));
    }
  }

  /** Adds materialized records (values in schema order). */
  async writeKeyValues(records: readonly KeyValue[]): Promise<void> {
    await this.write(keyValueColumns(this.settings.schema.fields, records));
  }

  /** Writes the buffered rest and returns the metadata of every file written. */
  async close(): Promise<DataFileMeta[]> {
    if (!this.closed) {
      this.closed = true;
      if (this.pendingRows > 0) await this.writeFile(this.pendingRows);
    }
    return [...this.files];
  }

  /** Deletes every file written and discards buffered rows. */
  async abort(): Promise<void> {
    this.closed = true;
    this.pending = [];
    this.pendingRows = 0;
    this.pendingBytes = 0;
    await this.settings.fileIO.deleteMany(this.files.flatMap((f) => withExtraFiles(this.settings.pathOf(f.fileName), f)));
    this.files.length = 0;
  }

  /** Takes the first `rows` buffered rows off the queue (each piece becomes a batch of the file). */
  private take(rows: number): Piece[] {
    const parts: Piece[] = [];
    let left = rows;
    while (left > 0) {
      const p = this.pending[0]!;
      if (p.rows <= left) {
        parts.push(p);
        this.pending.shift();
        left -= p.rows;
        continue;
      }
      const share = Math.round((p.bytes * left) / p.rows);
      parts.push({
        columns: p.columns.map((c) => c.slice(0, left)),
        sequence: p.sequence.subarray(0, left),
        kinds: p.kinds.subarray(0, left),
        rows: left,
        bytes: share,
      });
      this.pending[0] = {
        columns: p.columns.map((c) => c.slice(left, c.length - left)),
        sequence: p.sequence.subarray(left),
        kinds: p.kinds.subarray(left),
        rows: p.rows - left,
        bytes: p.bytes - share,
      };
      left = 0;
    }
    this.pendingRows -= rows;
    for (const p of parts) this.pendingBytes -= p.bytes;
    return parts;
  }

  private async writeFile(rows: number): Promise<void> {
    const parts = this.take(rows);
    const { schema } = this.settings;
    const valueStats = new FileStatsCollector(schema.fields, this.options);
    const keyStats = new FileStatsCollector(this.keyFields, { statsModeOf: () => ({ kind: 'full' }), statsDenseStore: true });
    const keySchema = toArrowSchema(this.keyFields);
    const batches: arrow.RecordBatch[] = [];
    let arrowBytes = 0;
    let minSeq: bigint | null = null;
    let maxSeq: bigint | null = null;
    let deletes = 0;
    const index = this.fileIndex === null ? null : new DataFileIndexWriter(this.fileIndex);
    for (const p of parts) {
      const n = p.rows;
      arrowBytes += p.bytes;
      const keyColumns = this.keyPositions.map((i) => p.columns[i]!);
      valueStats.add(makeBatch(this.valueSchema, p.columns, n));
      keyStats.add(makeBatch(keySchema, keyColumns, n));
      index?.add(p.columns, n);
      const seq = arrow.makeData({ type: new arrow.Int64(), length: n, nullCount: 0, data: p.sequence });
      const kind = arrow.makeData({ type: new arrow.Int8(), length: n, nullCount: 0, data: p.kinds });
      batches.push(makeBatch(this.fileSchema, [...keyColumns, seq, kind, ...p.columns], n));
      const [lo, hi] = int64Range(p.sequence);
      if (minSeq === null || lo < minSeq) minSeq = lo;
      if (maxSeq === null || hi > maxSeq) maxSeq = hi;
      for (let i = 0; i < n; i++) if (isRetraction(p.kinds[i]!)) deletes++;
    }
    const first = parts[0]!;
    const last = parts[parts.length - 1]!;
    const minKey = this.keyOf(first, 0);
    const maxKey = this.keyOf(last, last.rows - 1);
    const fileName = this.settings.newFileName();
    if (this.settings.beforeFile) await this.settings.beforeFile();
    // Row groups of a large file (a full compaction's output) encode on every worker at once.
    const bytes = await encodeParquetRowGroupsAsync(batches, { compression: this.compression, plainColumns: this.plainColumns });
    this.estimate.record(bytes.length, arrowBytes);
    await this.settings.fileIO.write(this.settings.pathOf(fileName), bytes);
    const indexFields = index === null ? NO_FILE_INDEX : await index.finish(this.settings.fileIO, this.settings.pathOf(fileName));
    const { valueStats: vs, valueStatsCols } = valueStats.result();
    const now = (this.settings.now ?? Date.now)();
    this.files.push({
      fileName,
      fileSize: bytes.length,
      rowCount: rows,
      minKey: serializeBinaryRow(
        this.keyFields.map((f) => f.type),
        minKey,
      ),
      maxKey: serializeBinaryRow(
        this.keyFields.map((f) => f.type),
        maxKey,
      ),
      keyStats: keyStats.result().valueStats,
      valueStats: vs,
      minSequenceNumber: minSeq!,
      maxSequenceNumber: maxSeq!,
      schemaId: schema.id,
      level: this.settings.level,
      extraFiles: indexFields.extraFiles,
      creationTime: creationTimeOf(now),
      deleteRowCount: deletes,
      embeddedIndex: indexFields.embeddedIndex,
      fileSource: this.settings.fileSource,
      valueStatsCols,
      externalPath: null,
      firstRowId: null,
      writeCols: null,
      writeColsSequences: null,
    });
  }

  private keyOf(piece: Piece, row: number): Value[] {
    return this.keyPositions.map((i, k) => valueReader(piece.columns[i]!, this.keyFields[k]!.type)(row));
  }
}

/**
 * The smallest and largest value of a non-empty BigInt64Array, compared as 32-bit halves (signed
 * high, unsigned low) so that no BigInt is made per element.
 */
function int64Range(values: BigInt64Array): [bigint, bigint] {
  const halves = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  let min = 0;
  let max = 0;
  for (let i = 1; i < values.length; i++) {
    const hi = halves[2 * i + 1]!;
    const lo = halves[2 * i]! >>> 0;
    const minHi = halves[2 * min + 1]!;
    if (hi < minHi || (hi === minHi && lo < halves[2 * min]! >>> 0)) min = i;
    const maxHi = halves[2 * max + 1]!;
    if (hi > maxHi || (hi === maxHi && lo > halves[2 * max]! >>> 0)) max = i;
  }
  return [values[min]!, values[max]!];
}
