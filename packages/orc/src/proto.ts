/**
 * The protobuf messages of an ORC file tail and stripe footers, decoded with protobufjs.
 *
 * protobufjs was chosen over @bufbuild/protobuf because it builds the message types at load time
 * from schema text: no code generator or generated sources to keep in sync, and it is the most used
 * protobuf library for JavaScript. The schema below holds only the messages and fields this reader
 * needs, with the field numbers of the ORC specification; unknown fields are skipped by protobuf.
 * 64-bit integers come back as decimal strings (`longs: String`) and are converted here: offsets
 * and counts to numbers, statistics bounds to bigint.
 */
import protobuf from 'protobufjs';

import { OrcDecodeError } from './errors.js';

const SCHEMA = `
syntax = "proto2";
package orc.proto;
message IntegerStatistics { optional sint64 minimum = 1; optional sint64 maximum = 2; optional sint64 sum = 3; }
message DoubleStatistics { optional double minimum = 1; optional double maximum = 2; optional double sum = 3; }
message StringStatistics { optional string minimum = 1; optional string maximum = 2; optional sint64 sum = 3;
  optional string lowerBound = 4; optional string upperBound = 5; }
message BucketStatistics { repeated uint64 count = 1 [packed = true]; }
message DecimalStatistics { optional string minimum = 1; optional string maximum = 2; optional string sum = 3; }
message DateStatistics { optional sint32 minimum = 1; optional sint32 maximum = 2; }
message TimestampStatistics { optional sint64 minimum = 1; optional sint64 maximum = 2; optional sint64 minimumUtc = 3;
  optional sint64 maximumUtc = 4; optional int32 minimumNanos = 5; optional int32 maximumNanos = 6; }
message BinaryStatistics { optional sint64 sum = 1; }
message ColumnStatistics {
  optional uint64 numberOfValues = 1; optional IntegerStatistics intStatistics = 2; optional DoubleStatistics doubleStatistics = 3;
  optional StringStatistics stringStatistics = 4; optional BucketStatistics bucketStatistics = 5;
  optional DecimalStatistics decimalStatistics = 6; optional DateStatistics dateStatistics = 7;
  optional BinaryStatistics binaryStatistics = 8; optional TimestampStatistics timestampStatistics = 9; optional bool hasNull = 10;
}
message RowIndexEntry { repeated uint64 positions = 1 [packed = true]; optional ColumnStatistics statistics = 2; }
message RowIndex { repeated RowIndexEntry entry = 1; }
message Stream { optional uint32 kind = 1; optional uint32 column = 2; optional uint64 length = 3; }
message ColumnEncoding { optional uint32 kind = 1; optional uint32 dictionarySize = 2; }
message StripeFooter { repeated Stream streams = 1; repeated ColumnEncoding columns = 2; optional string writerTimezone = 3; }
message StringPair { optional string key = 1; optional string value = 2; }
message Type {
  optional uint32 kind = 1; repeated uint32 subtypes = 2 [packed = true]; repeated string fieldNames = 3;
  optional uint32 maximumLength = 4; optional uint32 precision = 5; optional uint32 scale = 6; repeated StringPair attributes = 7;
}
message StripeInformation { optional uint64 offset = 1; optional uint64 indexLength = 2; optional uint64 dataLength = 3;
  optional uint64 footerLength = 4; optional uint64 numberOfRows = 5; }
message UserMetadataItem { optional string name = 1; optional bytes value = 2; }
message StripeStatistics { repeated ColumnStatistics colStats = 1; }
message Metadata { repeated StripeStatistics stripeStats = 1; }
message Footer {
  optional uint64 headerLength = 1; optional uint64 contentLength = 2; repeated StripeInformation stripes = 3; repeated Type types = 4;
  repeated UserMetadataItem metadata = 5; optional uint64 numberOfRows = 6; repeated ColumnStatistics statistics = 7;
  optional uint32 rowIndexStride = 8; optional uint32 writer = 9; optional bytes encryption = 10; optional uint32 calendar = 11;
}
message PostScript {
  optional uint64 footerLength = 1; optional uint32 compression = 2; optional uint64 compressionBlockSize = 3;
  repeated uint32 version = 4 [packed = true]; optional uint64 metadataLength = 5; optional uint32 writerVersion = 6;
  optional uint64 stripeStatisticsLength = 7; optional string magic = 8000;
}
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const messageType = (name: string): protobuf.Type => root.lookupType(`orc.proto.${name}`);
const TYPES = {
  PostScript: messageType('PostScript'),
  Footer: messageType('Footer'),
  Metadata: messageType('Metadata'),
  StripeFooter: messageType('StripeFooter'),
  RowIndex: messageType('RowIndex'),
};

/** Compression kinds of the postscript. */
export const enum CompressionKind {
  NONE = 0,
  ZLIB = 1,
  SNAPPY = 2,
  LZO = 3,
  LZ4 = 4,
  ZSTD = 5,
}

/** Type kinds of the footer's type list. */
export enum TypeKind {
  BOOLEAN = 0,
  BYTE = 1,
  SHORT = 2,
  INT = 3,
  LONG = 4,
  FLOAT = 5,
  DOUBLE = 6,
  STRING = 7,
  BINARY = 8,
  TIMESTAMP = 9,
  LIST = 10,
  MAP = 11,
  STRUCT = 12,
  UNION = 13,
  DECIMAL = 14,
  DATE = 15,
  VARCHAR = 16,
  CHAR = 17,
  TIMESTAMP_INSTANT = 18,
}

/** Stream kinds of a stripe footer. */
export const enum StreamKind {
  PRESENT = 0,
  DATA = 1,
  LENGTH = 2,
  DICTIONARY_DATA = 3,
  DICTIONARY_COUNT = 4,
  SECONDARY = 5,
  ROW_INDEX = 6,
  BLOOM_FILTER = 7,
  BLOOM_FILTER_UTF8 = 8,
}

/** Column encodings of a stripe footer. */
export const enum EncodingKind {
  DIRECT = 0,
  DICTIONARY = 1,
  DIRECT_V2 = 2,
  DICTIONARY_V2 = 3,
  DECIMAL_64 = 4,
}

export interface PostScript {
  readonly footerLength: number;
  readonly compression: number;
  readonly compressionBlockSize: number;
  readonly version: readonly number[];
  readonly metadataLength: number;
  readonly writerVersion: number;
  readonly magic: string;
}

export interface OrcType {
  readonly kind: TypeKind;
  readonly subtypes: readonly number[];
  readonly fieldNames: readonly string[];
  readonly maximumLength: number;
  readonly precision: number;
  readonly scale: number;
  readonly attributes: ReadonlyMap<string, string>;
}

export interface StripeInformation {
  readonly offset: number;
  readonly indexLength: number;
  readonly dataLength: number;
  readonly footerLength: number;
  readonly numberOfRows: number;
}

/** Column statistics; integer, date and timestamp bounds as bigint/number, strings as decoded text. */
export interface ColumnStatistics {
  readonly numberOfValues: number | null;
  readonly hasNull: boolean | null;
  readonly intMin?: bigint;
  readonly intMax?: bigint;
  readonly doubleMin?: number;
  readonly doubleMax?: number;
  readonly stringMin?: string;
  readonly stringMax?: string;
  readonly decimalMin?: string;
  readonly decimalMax?: string;
  readonly dateMin?: number;
  readonly dateMax?: number;
  /** Timestamp bounds in UTC milliseconds (ORC-135 `minimumUtc`/`maximumUtc`). */
  readonly timestampMinUtc?: bigint;
  readonly timestampMaxUtc?: bigint;
  /** True counts of the boolean column (bucket statistics). */
  readonly trueCount?: number;
}

export interface Footer {
  readonly contentLength: number;
  readonly stripes: readonly StripeInformation[];
  readonly types: readonly OrcType[];
  readonly metadata: ReadonlyMap<string, Uint8Array>;
  /** Rows of the file; null when the footer does not record it. */
  readonly numberOfRows: number | null;
  readonly statistics: readonly ColumnStatistics[];
  readonly rowIndexStride: number;
  readonly writer: number;
  readonly encrypted: boolean;
}

export interface StreamInfo {
  readonly kind: StreamKind;
  readonly column: number;
  readonly length: number;
}

export interface ColumnEncoding {
  readonly kind: EncodingKind;
  readonly dictionarySize: number;
}

export interface StripeFooter {
  readonly streams: readonly StreamInfo[];
  readonly columns: readonly ColumnEncoding[];
  readonly writerTimezone: string;
}

export interface RowIndexEntry {
  readonly positions: readonly number[];
  readonly statistics: ColumnStatistics | null;
}

type Obj = Record<string, unknown>;

function decode(type: protobuf.Type, bytes: Uint8Array, what: string): Obj {
  try {
    return type.toObject(type.decode(bytes), { longs: String, bytes: Uint8Array, arrays: true, defaults: false }) as Obj;
  } catch (err) {
    throw new OrcDecodeError(`cannot decode the ${what}: ${(err as Error).message}`, { cause: err });
  }
}

/** A uint64 offset/count as a number; refuses values a number cannot hold exactly. */
function num(v: unknown, what: string, fallback = 0): number {
  if (v === undefined || v === null) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new OrcDecodeError(`${what} ${String(v)} is not a valid size or count`);
  return n;
}

const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

export function decodePostScript(bytes: Uint8Array): PostScript {
  const o = decode(TYPES.PostScript, bytes, 'postscript');
  return {
    footerLength: num(o.footerLength, 'footer length'),
    compression: Number(o.compression ?? 0),
    compressionBlockSize: num(o.compressionBlockSize, 'compression block size', 256 * 1024),
    version: arr(o.version).map(Number),
    metadataLength: num(o.metadataLength, 'metadata length'),
    writerVersion: Number(o.writerVersion ?? 0),
    magic: typeof o.magic === 'string' ? o.magic : '',
  };
}

function statistics(o: Obj | undefined): ColumnStatistics {
  if (!o) return { numberOfValues: null, hasNull: null };
  const s: { -readonly [K in keyof ColumnStatistics]: ColumnStatistics[K] } = {
    numberOfValues: o.numberOfValues === undefined ? null : Number(o.numberOfValues),
    hasNull: o.hasNull === undefined ? null : Boolean(o.hasNull),
  };
  const i = o.intStatistics as Obj | undefined;
  if (i?.minimum !== undefined) s.intMin = BigInt(i.minimum as string);
  if (i?.maximum !== undefined) s.intMax = BigInt(i.maximum as string);
  const d = o.doubleStatistics as Obj | undefined;
  if (d?.minimum !== undefined) s.doubleMin = d.minimum as number;
  if (d?.maximum !== undefined) s.doubleMax = d.maximum as number;
  const str = o.stringStatistics as Obj | undefined;
  if (str?.minimum !== undefined) s.stringMin = str.minimum as string;
  if (str?.maximum !== undefined) s.stringMax = str.maximum as string;
  const dec = o.decimalStatistics as Obj | undefined;
  if (dec?.minimum !== undefined) s.decimalMin = dec.minimum as string;
  if (dec?.maximum !== undefined) s.decimalMax = dec.maximum as string;
  const date = o.dateStatistics as Obj | undefined;
  if (date?.minimum !== undefined) s.dateMin = date.minimum as number;
  if (date?.maximum !== undefined) s.dateMax = date.maximum as number;
  const ts = o.timestampStatistics as Obj | undefined;
  if (ts?.minimumUtc !== undefined) s.timestampMinUtc = BigInt(ts.minimumUtc as string);
  if (ts?.maximumUtc !== undefined) s.timestampMaxUtc = BigInt(ts.maximumUtc as string);
  const b = o.bucketStatistics as Obj | undefined;
  if (b && Array.isArray(b.count) && b.count.length > 0) s.trueCount = Number(b.count[0]);
  return s;
}

export function decodeFooter(bytes: Uint8Array): Footer {
  const o = decode(TYPES.Footer, bytes, 'footer');
  return {
    contentLength: num(o.contentLength, 'content length'),
    stripes: arr(o.stripes).map((s) => ({
      offset: num(s.offset, 'stripe offset'),
      indexLength: num(s.indexLength, 'stripe index length'),
      dataLength: num(s.dataLength, 'stripe data length'),
      footerLength: num(s.footerLength, 'stripe footer length'),
      numberOfRows: num(s.numberOfRows, 'stripe row count'),
    })),
    types: arr(o.types).map((t) => ({
      kind: Number(t.kind ?? 0) as TypeKind,
      subtypes: arr(t.subtypes).map(Number),
      fieldNames: arr(t.fieldNames).map(String),
      maximumLength: Number(t.maximumLength ?? 0),
      precision: Number(t.precision ?? 0),
      scale: Number(t.scale ?? 0),
      attributes: new Map(arr(t.attributes).map((p) => [String(p.key ?? ''), String(p.value ?? '')])),
    })),
    metadata: new Map(arr(o.metadata).map((m) => [String(m.name ?? ''), (m.value as Uint8Array) ?? new Uint8Array(0)])),
    // Absent in some early files; the reader then takes the sum of the stripes' rows.
    numberOfRows: o.numberOfRows === undefined ? null : num(o.numberOfRows, 'row count'),
    statistics: arr(o.statistics).map(statistics),
    rowIndexStride: Number(o.rowIndexStride ?? 0),
    writer: Number(o.writer ?? 0),
    encrypted: o.encryption !== undefined,
  };
}

/** Per-stripe column statistics of the file metadata section. */
export function decodeMetadata(bytes: Uint8Array): ColumnStatistics[][] {
  const o = decode(TYPES.Metadata, bytes, 'metadata');
  return arr(o.stripeStats).map((s) => arr(s.colStats).map(statistics));
}

export function decodeStripeFooter(bytes: Uint8Array): StripeFooter {
  const o = decode(TYPES.StripeFooter, bytes, 'stripe footer');
  return {
    streams: arr(o.streams).map((s) => ({
      kind: Number(s.kind ?? 0) as StreamKind,
      column: Number(s.column ?? 0),
      length: num(s.length, 'stream length'),
    })),
    columns: arr(o.columns).map((c) => ({ kind: Number(c.kind ?? 0) as EncodingKind, dictionarySize: Number(c.dictionarySize ?? 0) })),
    writerTimezone: typeof o.writerTimezone === 'string' ? o.writerTimezone : '',
  };
}

export function decodeRowIndex(bytes: Uint8Array): RowIndexEntry[] {
  const o = decode(TYPES.RowIndex, bytes, 'row index');
  return arr(o.entry).map((e) => ({
    positions: arr(e.positions).map((p) => num(p, 'row index position')),
    statistics: e.statistics ? statistics(e.statistics as Obj) : null,
  }));
}
