/**
 * Parquet footer reader (row counts, leaf columns with field ids, column-chunk statistics).
 *
 * hyparquet parses the Thrift footer; statistics are decoded here from the raw bytes because
 * hyparquet turns DECIMAL bounds into lossy JS numbers and reads INT96 as unsigned.
 */
import type { FileIO } from '@tidemark/storage';
import { parquetMetadata } from 'hyparquet';
import type { FileMetaData, SchemaElement } from 'hyparquet';
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';

import { CorruptFileError } from './errors.js';
import { RangeBlob } from './range-blob.js';

/**
 * A decoded statistics bound:
 * - INT32 (incl. DATE, TIME millis, INT_8/16) and FLOAT/DOUBLE: `number`;
 * - INT64 (incl. timestamps in their unit): `bigint`;
 * - INT96: `bigint` nanoseconds since the epoch (signed nanos-of-day, as Java writes them);
 * - DECIMAL of any physical type: `bigint` unscaled value (exact);
 * - BYTE_ARRAY annotated STRING/UTF8/ENUM/JSON: `string`; other binaries: `Uint8Array`;
 * - BOOLEAN: `boolean`.
 */
export type ParquetStatValue = boolean | number | bigint | string | Uint8Array;

/** One leaf column of a Parquet schema: path, physical type, field id. */
export interface ParquetLeafColumn {
  /** Path from the root, e.g. `['f5', 'list', 'element']`. */
  readonly path: readonly string[];
  readonly physicalType: string;
  /** Parquet `field_id`, absent in files written before Paimon 1.0. */
  readonly fieldId?: number;
  readonly element: SchemaElement;
}

/** Statistics of one column chunk as stored in the footer. */
export interface ParquetColumnChunkStats {
  readonly column: ParquetLeafColumn;
  readonly numValues: bigint;
  readonly nullCount?: bigint;
  readonly min?: ParquetStatValue;
  readonly max?: ParquetStatValue;
  /** False when the writer truncated the bound (long strings). Absent: not stated by the writer. */
  readonly minExact?: boolean;
  readonly maxExact?: boolean;
}

/** Row count, size and per-column statistics of one row group. */
export interface ParquetRowGroupInfo {
  readonly numRows: bigint;
  readonly totalByteSize: bigint;
  readonly columns: readonly ParquetColumnChunkStats[];
}

/** The decoded footer of a Parquet file: schema, row groups, key-value metadata. */
export interface ParquetFooter {
  readonly numRows: bigint;
  readonly createdBy?: string;
  /** Top-level (root children) field ids by column name. */
  readonly topLevelFieldIds: ReadonlyMap<string, number | undefined>;
  readonly leafColumns: readonly ParquetLeafColumn[];
  readonly rowGroups: readonly ParquetRowGroupInfo[];
  readonly keyValueMetadata: ReadonlyMap<string, string>;
  /** Size of the Thrift footer in bytes. */
  readonly metadataLength: number;
  /** hyparquet's parsed metadata, for callers that need more (e.g. to hand to `parquetRead`). */
  readonly metadata: FileMetaData;
}

/** Options of {@link readParquetFooter}. */
export interface ReadFooterOptions {
  /** Object size if already known, saving one `stat`. */
  readonly fileSize?: number;
  /** Bytes fetched from the end in the first read (default 64 KiB); larger footers cost one more read. */
  readonly initialFetchSize?: number;
}

/** Reads and decodes a Parquet footer with (usually) one ranged read of the file's tail. */
export async function readParquetFooter(io: FileIO, path: string, options: ReadFooterOptions = {}): Promise<ParquetFooter> {
  const blob = await RangeBlob.open(io, path, options.fileSize);
  if (blob.size < 12) throw new CorruptFileError(path, `file of ${blob.size} bytes is too short to be Parquet`);
  const first = Math.min(blob.size, options.initialFetchSize ?? 65536);
  let tail = await blob.slice(blob.size - first).bytes();
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  if (view.getUint32(tail.length - 4, true) !== 0x31524150) {
    throw new CorruptFileError(path, 'missing Parquet magic PAR1 at the end (truncated or not a Parquet file)');
  }
  const metadataLength = view.getUint32(tail.length - 8, true);
  if (metadataLength + 12 > blob.size) {
    throw new CorruptFileError(path, `footer length ${metadataLength} exceeds the file size ${blob.size}`);
  }
  if (metadataLength + 8 > tail.length) {
    tail = await blob.slice(blob.size - metadataLength - 8).bytes();
  }
  return decodeParquetFooter(path, tail, metadataLength);
}

/**
 * Decodes the footer at the end of `tail` (the file's last bytes, ending with the 8-byte trailer),
 * whose Thrift part is `metadataLength` bytes long.
 * @internal
 */
export function decodeParquetFooter(path: string, tail: Uint8Array, metadataLength: number): ParquetFooter {
  const footerBytes = tail.subarray(tail.length - 8 - metadataLength);
  try {
    return decodeFooter(footerBytes, metadataLength);
  } catch (err) {
    throw footerError(path, err);
  }
}

/**
 * The error for a footer that does not parse. hyparquet's wording ("thrift unhandled type 10") reads
 * like a crash; a damaged footer is a damaged file.
 * @internal
 */
export function footerError(path: string, err: unknown): CorruptFileError {
  return new CorruptFileError(path, `cannot decode Parquet footer (damaged metadata): ${damageDetail(err)}`, { cause: err });
}

/**
 * What a decoder's failure on damaged bytes says, in the file's terms. A JavaScript TypeError or
 * RangeError ("metadata.field_5?.map is not a function", "Offset is outside the bounds of the
 * DataView") is the decoder tripping over garbage, not a message for the user; its text stays in
 * the error's cause (`TIDEMARK_DEBUG=1`).
 * @internal
 */
export function damageDetail(err: unknown): string {
  if (err instanceof TypeError) return 'its fields do not have the types Parquet defines';
  if (err instanceof RangeError) return 'a length or offset in it points outside the bytes it has';
  return (err instanceof Error ? err.message : String(err))
    .replace(/^Error: /, '')
    .replace(/thrift unhandled type:?/i, 'unknown Thrift field type');
}

/** Converts an INT96 (julian day + signed nanos of day) to nanoseconds since the epoch, exactly. */
export function int96ToEpochNanos(julianDay: number, nanosOfDay: bigint): bigint {
  return (BigInt(julianDay) - 2440588n) * 86_400_000_000_000n + nanosOfDay;
}

/** Decodes a 12-byte INT96 value as Java Paimon writes it (little-endian int64 nanos, int32 day). */
export function decodeInt96(bytes: Uint8Array): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return int96ToEpochNanos(view.getInt32(8, true), view.getBigInt64(0, true));
}

function decodeFooter(footerWithTrailer: Uint8Array, metadataLength: number): ParquetFooter {
  const metadata = parquetMetadata(footerWithTrailer);
  const thriftBytes = footerWithTrailer.subarray(0, metadataLength);
  const raw = deserializeTCompactProtocol({
    view: new DataView(thriftBytes.buffer, thriftBytes.byteOffset, thriftBytes.byteLength),
    offset: 0,
  }) as RawFileMetaData;

  const leafColumns: ParquetLeafColumn[] = [];
  const topLevelFieldIds = new Map<string, number | undefined>();
  let index = 1;
  const walk = (prefix: string[], depth: number): void => {
    const element = metadata.schema[index++];
    if (!element) throw new Error('schema ends early');
    const path = [...prefix, element.name];
    if (depth === 1) topLevelFieldIds.set(element.name, element.field_id);
    if (element.num_children) {
      for (let i = 0; i < element.num_children; i++) walk(path, depth + 1);
    } else {
      leafColumns.push({
        path,
        physicalType: element.type ?? 'UNKNOWN',
        ...(element.field_id !== undefined ? { fieldId: element.field_id } : {}),
        element,
      });
    }
  };
  const rootChildren = metadata.schema[0]?.num_children ?? 0;
  for (let i = 0; i < rootChildren; i++) walk([], 1);

  const rowGroups = (raw.field_4 ?? []).map((rg): ParquetRowGroupInfo => ({
    numRows: BigInt(rg.field_3),
    totalByteSize: BigInt(rg.field_2),
    columns: rg.field_1.map((chunk, i): ParquetColumnChunkStats => {
      const column = leafColumns[i];
      if (!column) throw new Error(`row group has more column chunks than the schema has leaves`);
      const meta = chunk.field_3;
      const stats = meta?.field_12;
      const exact = column.physicalType !== 'BYTE_ARRAY' && column.physicalType !== 'FIXED_LEN_BYTE_ARRAY';
      // Legacy min/max (fields 2/1) used signed byte order for binaries; trust them only for numbers.
      const minRaw = stats?.field_6 ?? (exact ? stats?.field_2 : undefined);
      const maxRaw = stats?.field_5 ?? (exact ? stats?.field_1 : undefined);
      return {
        column,
        numValues: BigInt(meta?.field_5 ?? 0),
        ...(stats?.field_3 !== undefined ? { nullCount: BigInt(stats.field_3) } : {}),
        ...(minRaw !== undefined ? { min: decodeStat(minRaw, column.element) } : {}),
        ...(maxRaw !== undefined ? { max: decodeStat(maxRaw, column.element) } : {}),
        ...(stats?.field_8 !== undefined ? { minExact: stats.field_8 } : {}),
        ...(stats?.field_7 !== undefined ? { maxExact: stats.field_7 } : {}),
      };
    }),
  }));

  return {
    numRows: BigInt(metadata.num_rows),
    ...(metadata.created_by !== undefined ? { createdBy: metadata.created_by } : {}),
    topLevelFieldIds,
    leafColumns,
    rowGroups,
    keyValueMetadata: new Map((metadata.key_value_metadata ?? []).map((kv) => [kv.key, kv.value ?? ''])),
    metadataLength,
    metadata,
  };
}

/**
 * A statistics bound's bytes as a {@link ParquetStatValue} of the column `element` describes
 * (shared by the footer's chunk statistics and the column index's page bounds).
 * @internal
 */
export function decodeStat(bytes: Uint8Array, element: SchemaElement): ParquetStatValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isDecimal = element.converted_type === 'DECIMAL' || element.logical_type?.type === 'DECIMAL';
  switch (element.type) {
    case 'BOOLEAN':
      return bytes[0] === 1;
    case 'INT32':
      return isDecimal ? BigInt(view.getInt32(0, true)) : view.getInt32(0, true);
    case 'INT64':
      return view.getBigInt64(0, true);
    case 'INT96':
      return decodeInt96(bytes);
    case 'FLOAT':
      return view.getFloat32(0, true);
    case 'DOUBLE':
      return view.getFloat64(0, true);
    default: {
      if (isDecimal) return bigEndianSigned(bytes);
      const ct = element.converted_type;
      const lt = element.logical_type?.type;
      if (ct === 'UTF8' || ct === 'ENUM' || ct === 'JSON' || lt === 'STRING' || lt === 'ENUM' || lt === 'JSON') {
        return new TextDecoder().decode(bytes);
      }
      return bytes.slice();
    }
  }
}

function bigEndianSigned(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return bytes[0]! & 0x80 ? value - (1n << BigInt(8 * bytes.length)) : value;
}

interface RawStatistics {
  field_1?: Uint8Array;
  field_2?: Uint8Array;
  field_3?: bigint;
  field_5?: Uint8Array;
  field_6?: Uint8Array;
  field_7?: boolean;
  field_8?: boolean;
}
interface RawFileMetaData {
  field_4?: { field_1: { field_3?: { field_5?: bigint; field_12?: RawStatistics } }[]; field_2: bigint; field_3: bigint }[];
}
