/**
 * Parquet data-file writer: apache-arrow JS → IPC stream → parquet-wasm.
 *
 * Field ids come from the Arrow field metadata `PARQUET:field_id` (set by `toArrowField`); list
 * children must be named `element` (as `toArrowType` does) to get Paimon's `x.list.element`.
 * parquet-wasm always names MAP entries `entries` (Java writes `key_value`); readers that follow
 * the Parquet spec accept any name.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';

import { castData } from './arrow-cast.js';
import { FormatError } from './errors.js';

/** Paimon's `file.compression` values understood by the writer. */
export type ParquetCompression = 'zstd' | 'snappy' | 'lz4' | 'gzip' | 'none';

/** Options of the Parquet writers: compression, row group size, `created_by`. */
export interface ParquetWriteOptions {
  /** Codec of every column chunk (Paimon's default is zstd; parquet-wasm always uses level 1). */
  readonly compression?: ParquetCompression;
  /** Maximum rows per row group (parquet-rs default: 1,048,576). */
  readonly rowGroupSize?: number;
  /** Written into the footer's `created_by`. */
  readonly createdBy?: string;
  /**
   * Top-level columns written without a dictionary (plain, then compressed): columns whose values
   * are unique in the file, such as a single-column primary key and the sequence number of
   * key-value files, gain nothing from one, and a reader that wants a few rows of a large row
   * group would otherwise decode the whole dictionary page (up to 1 MiB) to read them.
   */
  readonly plainColumns?: readonly string[];
}

const CODECS: Record<ParquetCompression, pw.Compression> = {
  zstd: pw.Compression.ZSTD,
  snappy: pw.Compression.SNAPPY,
  // Parquet's LZ4 (hadoop framing) is deprecated; LZ4_RAW is what current readers expect.
  lz4: pw.Compression.LZ4_RAW,
  gzip: pw.Compression.GZIP,
  none: pw.Compression.UNCOMPRESSED,
};

/**
 * Encodes Arrow data as one Parquet file held in memory, with column-chunk statistics
 * (min/max/null_count) for every column. Runs on the calling thread; see `encodeParquetAsync`
 * for the worker-thread variant.
 */
export function writeParquetFile(input: arrow.Table | readonly arrow.RecordBatch[], options: ParquetWriteOptions = {}): Uint8Array {
  const { ipc, settings } = prepareParquetInput(input, options);
  return encodeParquetIpc(ipc, settings);
}

/**
 * Writer settings in a form that can cross a thread boundary (structured-clone safe). The worker
 * (`worker/parquet-encode-worker.mjs`) applies them exactly as {@link encodeParquetIpc} does.
 * @internal
 */
export interface ParquetEncodeSettings {
  /** A `pw.Compression` value. */
  readonly codec: number;
  readonly rowGroupSize?: number;
  readonly createdBy: string;
  /** See {@link ParquetWriteOptions.plainColumns}. */
  readonly plainColumns?: readonly string[];
}

/** Arrow data turned into the IPC stream parquet-wasm reads, plus its writer settings. @internal */
export interface PreparedParquetInput {
  readonly ipc: Uint8Array;
  readonly settings: ParquetEncodeSettings;
}

/**
 * The JS half of {@link writeParquetFile}: validates the options and serialises the Arrow data
 * (with the Timestamp[s] and shared-buffer fixes) to an IPC stream.
 * @internal
 */
export function prepareParquetInput(
  input: arrow.Table | readonly arrow.RecordBatch[],
  options: ParquetWriteOptions = {},
): PreparedParquetInput {
  const settings = parquetEncodeSettings(options);
  const table = prepareTable(input);
  return { ipc: arrow.tableToIPC(table, 'stream'), settings };
}

/**
 * The writer settings of `options`, validated (the part of {@link prepareParquetInput} that does
 * not touch the rows).
 * @internal
 */
export function parquetEncodeSettings(options: ParquetWriteOptions = {}): ParquetEncodeSettings {
  const compression = options.compression ?? 'zstd';
  const codec = CODECS[compression];
  if (codec === undefined) {
    throw new FormatError(`unsupported Parquet compression '${String(compression)}' (use zstd, snappy, lz4, gzip or none)`);
  }
  if (options.rowGroupSize !== undefined && (!Number.isInteger(options.rowGroupSize) || options.rowGroupSize <= 0)) {
    throw new FormatError(`rowGroupSize must be a positive integer, got ${options.rowGroupSize}`);
  }
  return {
    codec,
    createdBy: options.createdBy ?? 'tidemark',
    ...(options.rowGroupSize !== undefined ? { rowGroupSize: options.rowGroupSize } : {}),
    ...(options.plainColumns !== undefined && options.plainColumns.length > 0 ? { plainColumns: [...options.plainColumns] } : {}),
  };
}

/**
 * parquet-wasm's writer properties for `settings`: the codec, page-level statistics (the column
 * index lets a key lookup read only the pages of a large row group that can hold its key;
 * parquet-mr, which Java Paimon writes with, writes one too), no dictionary for the plain columns.
 * @internal
 */
export function parquetWriterProperties(settings: ParquetEncodeSettings, rowGroupSize?: number): pw.WriterProperties {
  let builder = new pw.WriterPropertiesBuilder()
    .setCompression(settings.codec)
    .setStatisticsEnabled(pw.EnabledStatistics.Page)
    .setCreatedBy(settings.createdBy);
  const groupRows = settings.rowGroupSize ?? rowGroupSize;
  if (groupRows !== undefined) builder = builder.setMaxRowGroupSize(groupRows);
  for (const column of settings.plainColumns ?? []) builder = builder.setColumnDictionaryEnabled(column, false);
  return builder.build();
}

/**
 * The wasm half of {@link writeParquetFile}: encodes an Arrow IPC stream as Parquet on this thread.
 * @internal
 */
export function encodeParquetIpc(ipc: Uint8Array, settings: ParquetEncodeSettings): Uint8Array {
  // writeParquet consumes (frees) the wasm table.
  const wasmTable = pw.Table.fromIPCStream(ipc);
  return pw.writeParquet(wasmTable, parquetWriterProperties(settings));
}

/**
 * Builds a Utf8 vector from JS strings much faster than `vectorFromArray` (one byte-length pass,
 * one `Buffer.write` per string).
 */
export function utf8Vector(strings: readonly (string | null | undefined)[]): arrow.Vector<arrow.Utf8> {
  const n = strings.length;
  const valueOffsets = new Int32Array(n + 1);
  const nullBitmap = new Uint8Array((n + 7) >> 3);
  let total = 0;
  let nullCount = 0;
  for (let i = 0; i < n; i++) {
    const s = strings[i];
    if (s == null) nullCount++;
    else {
      total += Buffer.byteLength(s, 'utf8');
      nullBitmap[i >> 3]! |= 1 << (i & 7);
    }
    if (total > 0x7fffffff) throw new FormatError('utf8Vector: more than 2 GiB of string data in one vector');
    valueOffsets[i + 1] = total;
  }
  const data = Buffer.allocUnsafe(total);
  for (let i = 0; i < n; i++) {
    const s = strings[i];
    if (s != null) data.write(s, valueOffsets[i]!, 'utf8');
  }
  const bytes = new Uint8Array(data.buffer, data.byteOffset, total);
  return arrow.makeVector(
    arrow.makeData({
      type: new arrow.Utf8(),
      length: n,
      nullCount,
      nullBitmap: nullCount > 0 ? nullBitmap : new Uint8Array(0),
      valueOffsets,
      data: bytes,
    }),
  );
}

function prepareTable(input: arrow.Table | readonly arrow.RecordBatch[]): arrow.Table {
  const table = input instanceof arrow.Table ? input : new arrow.Table(input as arrow.RecordBatch[]);
  if (table.schema.fields.length === 0) throw new FormatError('cannot write a Parquet file without columns');
  const schema = new arrow.Schema(
    table.schema.fields.map((f) => f.clone({ type: withoutSeconds(f.type) })),
    table.schema.metadata,
  );
  const seen = new Set<unknown>();
  const batches = table.batches.map((batch) => {
    const children = batch.data.children.map((child, i) => {
      const field = schema.fields[i]!;
      const typed = field.type === table.schema.fields[i]!.type ? child : castData(child, field.type, field.name);
      return unshare(typed, seen);
    });
    const struct = arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: batch.numRows,
      nullCount: 0,
      children,
    });
    return new arrow.RecordBatch(schema, struct);
  });
  return new arrow.Table(schema, batches);
}

// Parquet has no seconds unit: parquet-rs writes Timestamp[s] as a bare INT64, so use millis.
function withoutSeconds(type: arrow.DataType): arrow.DataType {
  if (arrow.DataType.isTimestamp(type)) {
    return type.unit === arrow.TimeUnit.SECOND ? new arrow.Timestamp(arrow.TimeUnit.MILLISECOND, type.timezone) : type;
  }
  if (arrow.DataType.isStruct(type)) {
    const fields = type.children.map((f) => f.clone({ type: withoutSeconds(f.type) }));
    return fields.every((f, i) => f.type === type.children[i]!.type) ? type : new arrow.Struct(fields);
  }
  if (arrow.DataType.isList(type)) {
    const child = type.children[0]!;
    const t = withoutSeconds(child.type);
    return t === child.type ? type : new arrow.List(child.clone({ type: t }));
  }
  if (arrow.DataType.isMap(type)) {
    const child = type.children[0]!;
    const t = withoutSeconds(child.type);
    return t === child.type ? type : new arrow.Map_(child.clone({ type: t }) as arrow.Field<arrow.Struct>, type.keysSorted);
  }
  return type;
}

// apache-arrow 21 writes a corrupt IPC stream when two vectors share one typed array
// (libraries.md §1), so every buffer seen a second time is copied.
function unshare(data: arrow.Data, seen: Set<unknown>): arrow.Data {
  const children = data.children.map((c) => unshare(c, seen));
  const buffers = [data.valueOffsets, data.values, data.nullBitmap, data.typeIds].map((b) => {
    if (!b || b.byteLength === 0) return b;
    if (!seen.has(b)) {
      seen.add(b);
      return b;
    }
    return b.slice();
  });
  const changed = buffers.some((b, i) => b !== [data.valueOffsets, data.values, data.nullBitmap, data.typeIds][i]);
  if (!changed && children.every((c, i) => c === data.children[i])) return data;
  return data.clone(data.type, data.offset, data.length, data.nullCount, buffers as never, children);
}
