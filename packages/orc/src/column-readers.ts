/**
 * Column readers of one stripe: each turns the streams of one ORC column into Arrow data, a batch
 * of rows at a time. A reader is asked for `n` rows of its parent's domain together with the
 * parent's validity: rows whose parent is null have no entry in the child's streams (ORC writes
 * nothing for them) and come out null. Children of lists and maps get one row per element;
 * union branches get the rows of their tag.
 */
import * as arrow from 'apache-arrow';

import { ByteCursor } from './byte-cursor.js';
import { BooleanDecoder, ByteRleDecoder } from './byte-rle.js';
import { OrcDecodeError } from './errors.js';
import { intDecoder, type IntDecoder } from './int-rle.js';
import { EncodingKind, StreamKind, TypeKind, type ColumnEncoding } from './proto.js';
import { arrowType, decimalShape, type OrcTypeNode } from './schema.js';
import { isUtcZone, zoneOffsetSeconds } from './timezone.js';

/** The decompressed streams and encodings of one stripe, as the column readers need them. */
export interface StripeStreams {
  /** A decompressed stream, or null when the stripe has none of that kind for the column. */
  stream(column: number, kind: StreamKind): Uint8Array | null;
  encoding(column: number): ColumnEncoding;
  readonly writerTimezone: string;
  /**
   * Decimals of precision 1..18 are stored as 64-bit integers whatever their encoding says (files of
   * the pre-2.0 format version 1.9999).
   */
  readonly decimal64ByVersion: boolean;
  /**
   * The decompressed offset a row-index position addresses in a stream: takes the byte offset
   * (uncompressed files) or the chunk's compressed offset and the offset inside the chunk.
   */
  streamOffset(column: number, kind: StreamKind, positions: Positions): number;
}

/** The positions of one row-index entry of one column, consumed stream by stream. */
export class Positions {
  private at = 0;

  constructor(
    private readonly list: readonly number[],
    private readonly column: number,
  ) {}

  next(): number {
    const v = this.list[this.at++];
    if (v === undefined) throw new OrcDecodeError(`column ${this.column}: its row index entry has too few positions`);
    return v;
  }
}

/** Row-index positions of a row group, by column id. */
export type RowGroupPositions = (column: number) => Positions;

export interface ColumnReader {
  /** Reads the next `n` rows; `parentValid[i] === 0` marks rows that do not exist in this column. */
  read(n: number, parentValid: Uint8Array | null): arrow.Data;
  /** Moves this column and its children to the start of a row group. */
  seek(positions: RowGroupPositions): void;
}

const STREAM_NAMES = ['PRESENT', 'DATA', 'LENGTH', 'DICTIONARY_DATA', 'DICTIONARY_COUNT', 'SECONDARY', 'ROW_INDEX'];

/** Seconds from 1970-01-01 to 2015-01-01, the base of ORC timestamps. */
const ORC_EPOCH_SECONDS = 1420070400;

interface Presence {
  /** 1 per present row, 0 per null row; null when every row is present. */
  readonly valid: Uint8Array | null;
  readonly nonNull: number;
}

abstract class BaseReader implements ColumnReader {
  private readonly present: BooleanDecoder | null;
  protected readonly type: arrow.DataType;

  constructor(
    protected readonly node: OrcTypeNode,
    protected readonly streams: StripeStreams,
  ) {
    const bytes = streams.stream(node.id, StreamKind.PRESENT);
    this.present = bytes ? new BooleanDecoder(this.cursor(bytes, StreamKind.PRESENT)) : null;
    this.type = arrowType(node);
  }

  protected cursor(bytes: Uint8Array, kind: StreamKind): ByteCursor {
    return new ByteCursor(bytes, `column ${this.node.id} ${STREAM_NAMES[kind] ?? kind}`);
  }

  /** A stream the column's encoding requires. */
  protected required(kind: StreamKind): ByteCursor {
    const bytes = this.streams.stream(this.node.id, kind);
    if (!bytes) {
      throw new OrcDecodeError(`column ${this.node.id} (${TypeKind[this.node.kind]}) has no ${STREAM_NAMES[kind] ?? kind} stream`);
    }
    return this.cursor(bytes, kind);
  }

  protected get encoding(): ColumnEncoding {
    return this.streams.encoding(this.node.id);
  }

  /** Integer RLE version 2 for the `_V2` encodings (and DECIMAL_64), version 1 otherwise. */
  protected get v2(): boolean {
    const k = this.encoding.kind;
    return k === EncodingKind.DIRECT_V2 || k === EncodingKind.DICTIONARY_V2 || k === EncodingKind.DECIMAL_64;
  }

  protected presence(n: number, parentValid: Uint8Array | null): Presence {
    if (!this.present && !parentValid) return { valid: null, nonNull: n };
    const valid = new Uint8Array(n);
    let nonNull = 0;
    for (let i = 0; i < n; i++) {
      if (parentValid && parentValid[i] === 0) continue;
      const v = this.present ? this.present.next() : true;
      if (v) {
        valid[i] = 1;
        nonNull++;
      }
    }
    return nonNull === n ? { valid: null, nonNull } : { valid, nonNull };
  }

  abstract read(n: number, parentValid: Uint8Array | null): arrow.Data;

  seek(positions: RowGroupPositions): void {
    const p = positions(this.node.id);
    if (this.present) this.present.seek(this.offset(StreamKind.PRESENT, p), p.next(), p.next());
    this.seekData(p);
    for (const child of this.childReaders()) child.seek(positions);
  }

  /** Positions the column's own streams, in the order the writer records them. */
  protected abstract seekData(p: Positions): void;

  protected childReaders(): readonly ColumnReader[] {
    return [];
  }

  protected offset(kind: StreamKind, p: Positions): number {
    return this.streams.streamOffset(this.node.id, kind, p);
  }
}

function bitmap(valid: Uint8Array | null, n: number): Uint8Array | undefined {
  if (!valid) return undefined;
  const out = new Uint8Array(((n + 63) & ~63) >> 3);
  for (let i = 0; i < n; i++) if (valid[i]) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

/** Spreads `m` dense values over the present rows of `out` (in place, from the back). */
function spread<T extends { [i: number]: unknown; length: number }>(out: T, valid: Uint8Array | null, m: number): T {
  if (!valid) return out;
  let j = m - 1;
  for (let i = valid.length - 1; i >= 0; i--) {
    if (valid[i]) out[i] = out[j--] as never;
    else out[i] = (typeof out[i] === 'bigint' ? 0n : 0) as never;
  }
  return out;
}

function primitive(type: arrow.DataType, n: number, p: Presence, data: ArrayBufferView): arrow.Data {
  return arrow.makeData({ type, length: n, nullCount: n - p.nonNull, nullBitmap: bitmap(p.valid, n), data } as never);
}

class BooleanReader extends BaseReader {
  private readonly data = new BooleanDecoder(this.required(StreamKind.DATA));

  protected seekData(p: Positions): void {
    this.data.seek(this.offset(StreamKind.DATA, p), p.next(), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const bits = new Uint8Array(((n + 63) & ~63) >> 3);
    for (let i = 0; i < n; i++) {
      if (p.valid && !p.valid[i]) continue;
      if (this.data.next()) bits[i >> 3]! |= 1 << (i & 7);
    }
    return primitive(this.type, n, p, bits);
  }
}

class ByteReader extends BaseReader {
  private readonly data = new ByteRleDecoder(this.required(StreamKind.DATA));

  protected seekData(p: Positions): void {
    this.data.seek(this.offset(StreamKind.DATA, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const out = new Int8Array(n);
    this.data.read(out, 0, p.nonNull);
    return primitive(this.type, n, p, spread(out, p.valid, p.nonNull));
  }
}

class IntReader extends BaseReader {
  private readonly data: IntDecoder = intDecoder(this.required(StreamKind.DATA), true, this.v2);

  protected seekData(p: Positions): void {
    this.data.seek(this.offset(StreamKind.DATA, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    let out: Int16Array | Int32Array | BigInt64Array;
    if (this.node.kind === TypeKind.LONG) {
      out = new BigInt64Array(n);
      this.data.readBigInts(out, 0, p.nonNull);
    } else {
      const dense = new Float64Array(p.nonNull);
      this.data.readNumbers(dense, 0, p.nonNull);
      out = this.node.kind === TypeKind.SHORT ? new Int16Array(n) : new Int32Array(n);
      const [lo, hi] = this.node.kind === TypeKind.SHORT ? [-32768, 32767] : [-2147483648, 2147483647];
      for (let i = 0; i < dense.length; i++) {
        const v = dense[i]!;
        if (v < lo || v > hi) throw new OrcDecodeError(`column ${this.node.id}: value ${v} does not fit ${TypeKind[this.node.kind]}`);
        out[i] = v;
      }
    }
    return primitive(this.type, n, p, spread(out, p.valid, p.nonNull));
  }
}

class DateReader extends BaseReader {
  private readonly data = intDecoder(this.required(StreamKind.DATA), true, this.v2);

  protected seekData(p: Positions): void {
    this.data.seek(this.offset(StreamKind.DATA, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const out = new Int32Array(n);
    this.data.readNumbers(out, 0, p.nonNull);
    return primitive(this.type, n, p, spread(out, p.valid, p.nonNull));
  }
}

class FloatReader extends BaseReader {
  private readonly data = this.required(StreamKind.DATA);

  protected seekData(p: Positions): void {
    this.data.pos = this.offset(StreamKind.DATA, p);
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const double = this.node.kind === TypeKind.DOUBLE;
    const width = double ? 8 : 4;
    const raw = this.data.take(p.nonNull * width);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const out = double ? new Float64Array(n) : new Float32Array(n);
    for (let i = 0; i < p.nonNull; i++) out[i] = double ? view.getFloat64(i * 8, true) : view.getFloat32(i * 4, true);
    return primitive(this.type, n, p, spread(out, p.valid, p.nonNull));
  }
}

/** Builds Arrow variable-width data (Utf8/Binary) from per-row byte slices. */
function variableWidth(type: arrow.DataType, n: number, p: Presence, lengths: Float64Array, bytes: Uint8Array): arrow.Data {
  const offsets = new Int32Array(n + 1);
  let j = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (!p.valid || p.valid[i]) at += lengths[j++]!;
    offsets[i + 1] = at;
  }
  return arrow.makeData({
    type,
    length: n,
    nullCount: n - p.nonNull,
    nullBitmap: bitmap(p.valid, n),
    valueOffsets: offsets,
    data: bytes,
  } as never);
}

class DirectStringReader extends BaseReader {
  private readonly lengths = intDecoder(this.required(StreamKind.LENGTH), false, this.v2);
  private readonly data = this.required(StreamKind.DATA);

  protected seekData(p: Positions): void {
    this.data.pos = this.offset(StreamKind.DATA, p);
    this.lengths.seek(this.offset(StreamKind.LENGTH, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const lengths = new Float64Array(p.nonNull);
    this.lengths.readNumbers(lengths, 0, p.nonNull);
    let total = 0;
    for (let i = 0; i < lengths.length; i++) total += lengths[i]!;
    if (total > 0x7fffffff) throw new OrcDecodeError(`column ${this.node.id}: ${total} bytes of strings in one batch`);
    return variableWidth(this.type, n, p, lengths, this.data.take(total).slice());
  }
}

class DictionaryStringReader extends BaseReader {
  private readonly indexes = intDecoder(this.required(StreamKind.DATA), false, this.v2);
  private readonly dictOffsets: Float64Array;
  private readonly blob: Uint8Array;

  constructor(node: OrcTypeNode, streams: StripeStreams) {
    super(node, streams);
    const size = this.encoding.dictionarySize;
    this.dictOffsets = new Float64Array(size + 1);
    const blobBytes = streams.stream(node.id, StreamKind.DICTIONARY_DATA);
    this.blob = blobBytes ?? new Uint8Array(0);
    if (size > 0) {
      const lengths = new Float64Array(size);
      intDecoder(this.required(StreamKind.LENGTH), false, this.v2).readNumbers(lengths, 0, size);
      for (let i = 0; i < size; i++) this.dictOffsets[i + 1] = this.dictOffsets[i]! + lengths[i]!;
      if (this.dictOffsets[size]! > this.blob.length) {
        throw new OrcDecodeError(
          `column ${node.id}: dictionary entries need ${this.dictOffsets[size]} bytes, its DICTIONARY_DATA stream has ${blobBytes ? this.blob.length : 'none'}`,
        );
      }
    }
  }

  protected seekData(p: Positions): void {
    this.indexes.seek(this.offset(StreamKind.DATA, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const idx = new Float64Array(p.nonNull);
    this.indexes.readNumbers(idx, 0, p.nonNull);
    const size = this.encoding.dictionarySize;
    const lengths = new Float64Array(p.nonNull);
    let total = 0;
    for (let i = 0; i < idx.length; i++) {
      const k = idx[i]!;
      if (k >= size) throw new OrcDecodeError(`column ${this.node.id}: dictionary index ${k} is beyond the ${size} entries`);
      lengths[i] = this.dictOffsets[k + 1]! - this.dictOffsets[k]!;
      total += lengths[i]!;
    }
    const bytes = new Uint8Array(total);
    const blob = this.blob;
    let at = 0;
    // A byte loop: most dictionary entries are short, and a subarray per value costs more.
    for (let i = 0; i < idx.length; i++) {
      const k = idx[i]!;
      const end = this.dictOffsets[k + 1]!;
      for (let b = this.dictOffsets[k]!; b < end; b++) bytes[at++] = blob[b]!;
    }
    return variableWidth(this.type, n, p, lengths, bytes);
  }
}

const POW10: bigint[] = Array.from({ length: 80 }, (_, i) => 10n ** BigInt(i));

/** Writes a signed 128-bit integer into four little-endian 32-bit words at `i * 4`. */
function putInt128(out: Uint32Array, i: number, v: bigint): void {
  const u = BigInt.asUintN(128, v);
  out[i * 4] = Number(u & 0xffffffffn);
  out[i * 4 + 1] = Number((u >> 32n) & 0xffffffffn);
  out[i * 4 + 2] = Number((u >> 64n) & 0xffffffffn);
  out[i * 4 + 3] = Number((u >> 96n) & 0xffffffffn);
}

class DecimalReader extends BaseReader {
  private readonly data = this.required(StreamKind.DATA);
  private readonly decimal64 =
    this.encoding.kind === EncodingKind.DECIMAL_64 ||
    (this.streams.decimal64ByVersion && this.node.precision > 0 && this.node.precision <= 18);
  private readonly values: IntDecoder | null = this.decimal64 ? intDecoder(this.data, true, true) : null;
  private readonly scales: IntDecoder | null = this.decimal64 ? null : intDecoder(this.required(StreamKind.SECONDARY), true, this.v2);
  private readonly shape = decimalShape(this.node);

  protected seekData(p: Positions): void {
    const data = this.offset(StreamKind.DATA, p);
    if (this.values) this.values.seek(data, p.next());
    else {
      this.data.pos = data;
      this.scales!.seek(this.offset(StreamKind.SECONDARY, p), p.next());
    }
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const words = new Uint32Array(n * 4);
    const target = this.shape.scale;
    const limit = POW10[38]!;
    let dense: bigint[];
    if (this.values) {
      const raw = new BigInt64Array(p.nonNull);
      this.values.readBigInts(raw, 0, p.nonNull);
      dense = Array.from(raw);
    } else {
      const scales = new Float64Array(p.nonNull);
      dense = [];
      for (let i = 0; i < p.nonNull; i++) {
        const u = this.data.varUintUnbounded();
        dense.push((u >> 1n) ^ -(u & 1n));
      }
      this.scales!.readNumbers(scales, 0, p.nonNull);
      for (let i = 0; i < dense.length; i++) {
        const s = scales[i]!;
        if (s < 0 || s > 76) throw new OrcDecodeError(`column ${this.node.id}: decimal scale ${s} is out of range`);
        dense[i] = rescale(dense[i]!, s, target, this.shape.hive11);
      }
    }
    let j = 0;
    for (let i = 0; i < n; i++) {
      if (p.valid && !p.valid[i]) continue;
      const v = dense[j++]!;
      if (v >= limit || v <= -limit) throw new OrcDecodeError(`column ${this.node.id}: decimal ${v} exceeds 38 digits`);
      putInt128(words, i, v);
    }
    return primitive(this.type, n, p, words);
  }
}

/**
 * Rescales an unscaled decimal. Dropped digits round half away from zero (as Hive does), except for
 * Hive 0.11 decimals, which are truncated to the forced scale.
 */
function rescale(v: bigint, from: number, to: number, truncate: boolean): bigint {
  if (from === to) return v;
  if (from < to) return v * POW10[to - from]!;
  const d = POW10[from - to]!;
  const q = v / d;
  if (truncate) return q;
  const r = v % d;
  const twice = (r < 0n ? -r : r) * 2n;
  return twice >= d ? q + (v < 0n ? -1n : 1n) : q;
}

class TimestampReader extends BaseReader {
  private readonly seconds = intDecoder(this.required(StreamKind.DATA), true, this.v2);
  private readonly nanos = intDecoder(this.required(StreamKind.SECONDARY), false, this.v2);
  /** Zone of the stored seconds: the writer's for TIMESTAMP, UTC for TIMESTAMP_INSTANT. */
  private readonly zone = this.node.kind === TypeKind.TIMESTAMP ? this.streams.writerTimezone : 'UTC';
  private readonly base = ORC_EPOCH_SECONDS - zoneOffsetSeconds(this.zone, ORC_EPOCH_SECONDS);

  protected seekData(p: Positions): void {
    this.seconds.seek(this.offset(StreamKind.DATA, p), p.next());
    this.nanos.seek(this.offset(StreamKind.SECONDARY, p), p.next());
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const secs = new Float64Array(p.nonNull);
    const nanos = new Float64Array(p.nonNull);
    this.seconds.readNumbers(secs, 0, p.nonNull);
    this.nanos.readNumbers(nanos, 0, p.nonNull);
    const out = new BigInt64Array(n);
    const wallClock = this.node.kind === TypeKind.TIMESTAMP && !isUtcZone(this.zone);
    let j = 0;
    for (let i = 0; i < n; i++) {
      if (p.valid && !p.valid[i]) continue;
      const encoded = nanos[j]!;
      const zeros = encoded % 8;
      let ns = Math.floor(encoded / 8);
      if (zeros !== 0) ns *= 10 ** (zeros + 1);
      if (ns > 999_999_999) throw new OrcDecodeError(`column ${this.node.id}: nanoseconds ${ns} exceed one second`);
      let s = secs[j]! + this.base;
      // Writers truncate negative millisecond instants towards zero when splitting seconds off,
      // so a pre-1970 value with a sub-second part is one second too late.
      if (s < 0 && ns > 999_999) s -= 1;
      // TIMESTAMP is a wall-clock value of the writer's zone; Arrow holds it as if in UTC.
      if (wallClock) s += zoneOffsetSeconds(this.zone, s);
      out[i] = BigInt(s) * 1_000_000_000n + BigInt(ns);
      j++;
    }
    return primitive(this.type, n, p, out);
  }
}

class StructReader extends BaseReader {
  private readonly children = this.node.children.map((c) => createColumnReader(c, this.streams));

  protected seekData(): void {
    // A struct has no streams of its own besides PRESENT.
  }

  protected override childReaders(): readonly ColumnReader[] {
    return this.children;
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const children = this.children.map((c) => c.read(n, p.valid));
    return arrow.makeData({ type: this.type, length: n, nullCount: n - p.nonNull, nullBitmap: bitmap(p.valid, n), children } as never);
  }
}

/** Offsets from per-row lengths of the present rows. */
function offsetsFrom(n: number, p: Presence, lengths: Float64Array): Int32Array {
  const offsets = new Int32Array(n + 1);
  let j = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (!p.valid || p.valid[i]) at += lengths[j++]!;
    if (at > 0x7fffffff) throw new OrcDecodeError('more than 2^31 elements in one batch');
    offsets[i + 1] = at;
  }
  return offsets;
}

class ListReader extends BaseReader {
  private readonly lengths = intDecoder(this.required(StreamKind.LENGTH), false, this.v2);
  private readonly children = this.node.children.map((c) => createColumnReader(c, this.streams));

  protected seekData(p: Positions): void {
    this.lengths.seek(this.offset(StreamKind.LENGTH, p), p.next());
  }

  protected override childReaders(): readonly ColumnReader[] {
    return this.children;
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const lengths = new Float64Array(p.nonNull);
    this.lengths.readNumbers(lengths, 0, p.nonNull);
    const offsets = offsetsFrom(n, p, lengths);
    const total = offsets[n]!;
    const common = { type: this.type, length: n, nullCount: n - p.nonNull, nullBitmap: bitmap(p.valid, n), valueOffsets: offsets };
    if (this.node.kind === TypeKind.LIST) {
      return arrow.makeData({ ...common, child: this.children[0]!.read(total, null) } as never);
    }
    const entriesType = (this.type as arrow.Map_).children[0]!.type;
    const entries = arrow.makeData({
      type: entriesType,
      length: total,
      nullCount: 0,
      children: [this.children[0]!.read(total, null), this.children[1]!.read(total, null)],
    } as never);
    return arrow.makeData({ ...common, child: entries } as never);
  }
}

class UnionReader extends BaseReader {
  private readonly tags = new ByteRleDecoder(this.required(StreamKind.DATA));
  private readonly children = this.node.children.map((c) => createColumnReader(c, this.streams));

  protected seekData(p: Positions): void {
    this.tags.seek(this.offset(StreamKind.DATA, p), p.next());
  }

  protected override childReaders(): readonly ColumnReader[] {
    return this.children;
  }

  read(n: number, parentValid: Uint8Array | null): arrow.Data {
    const p = this.presence(n, parentValid);
    const branches = this.children.length;
    const typeIds = new Int8Array(n);
    const offsets = new Int32Array(n);
    const counts = new Array<number>(branches + 1).fill(0);
    const tags = new Uint8Array(p.nonNull);
    this.tags.read(tags, 0, p.nonNull);
    let j = 0;
    for (let i = 0; i < n; i++) {
      const tag = p.valid && !p.valid[i] ? branches : tags[j++]!;
      if (tag > branches || (tag === branches && !(p.valid && !p.valid[i]))) {
        throw new OrcDecodeError(`column ${this.node.id}: union tag ${tag} but the union has ${branches} branches`);
      }
      typeIds[i] = tag;
      offsets[i] = counts[tag]!++;
    }
    const children = this.children.map((c, k) => c.read(counts[k]!, null));
    children.push(arrow.makeData({ type: new arrow.Null(), length: counts[branches]! }));
    return arrow.makeData({ type: this.type, length: n, nullCount: 0, typeIds, valueOffsets: offsets, children } as never);
  }
}

/** The reader of a column (and its subtree) for a stripe's streams and encodings. */
export function createColumnReader(node: OrcTypeNode, streams: StripeStreams): ColumnReader {
  const encoding = streams.encoding(node.id).kind;
  const dictionary = encoding === EncodingKind.DICTIONARY || encoding === EncodingKind.DICTIONARY_V2;
  switch (node.kind) {
    case TypeKind.BOOLEAN:
      return new BooleanReader(node, streams);
    case TypeKind.BYTE:
      return new ByteReader(node, streams);
    case TypeKind.SHORT:
    case TypeKind.INT:
    case TypeKind.LONG:
      return new IntReader(node, streams);
    case TypeKind.DATE:
      return new DateReader(node, streams);
    case TypeKind.FLOAT:
    case TypeKind.DOUBLE:
      return new FloatReader(node, streams);
    case TypeKind.STRING:
    case TypeKind.VARCHAR:
    case TypeKind.CHAR:
    case TypeKind.BINARY:
      return dictionary ? new DictionaryStringReader(node, streams) : new DirectStringReader(node, streams);
    case TypeKind.DECIMAL:
      return new DecimalReader(node, streams);
    case TypeKind.TIMESTAMP:
    case TypeKind.TIMESTAMP_INSTANT:
      return new TimestampReader(node, streams);
    case TypeKind.STRUCT:
      return new StructReader(node, streams);
    case TypeKind.LIST:
    case TypeKind.MAP:
      return new ListReader(node, streams);
    case TypeKind.UNION:
      return new UnionReader(node, streams);
  }
}

/**
 * Checks a column's encoding kind against its type (a file whose stripe footer lists an encoding
 * the type cannot have is corrupt).
 */
export function checkEncoding(node: OrcTypeNode, encoding: ColumnEncoding): void {
  const k = encoding.kind;
  const direct = k === EncodingKind.DIRECT || k === EncodingKind.DIRECT_V2;
  const dictionary = k === EncodingKind.DICTIONARY || k === EncodingKind.DICTIONARY_V2;
  const stringy =
    node.kind === TypeKind.STRING || node.kind === TypeKind.VARCHAR || node.kind === TypeKind.CHAR || node.kind === TypeKind.BINARY;
  const ok = direct || (dictionary && stringy) || (k === EncodingKind.DECIMAL_64 && node.kind === TypeKind.DECIMAL);
  if (!ok) throw new OrcDecodeError(`column ${node.id} (${TypeKind[node.kind]}) has encoding ${k}, which its type cannot have`);
}
