/**
 * Decoding a few rows of flat Parquet columns page by page on the calling thread (hyparquet's page
 * decoders): what a key lookup needs from a large row group. parquet-wasm decodes a column chunk
 * from its dictionary page on: one row of a 1M-row group costs the decompression and decoding of
 * every value column's dictionary (100–350 KB compressed, ~1 MB each) and of a whole page per
 * column, on a worker, on every lookup. Here a dictionary page is decompressed once and kept as
 * bytes ({@link PageDictionary}: entry i is read where it lies, only the entries the selected
 * rows reference are ever looked at), and of each data page only the selected rows are copied out.
 *
 * Only column and value shapes whose raw Parquet values are exactly the Arrow values parquet-wasm
 * returns are decoded here ({@link pageColumnKind}); for anything else the caller decodes with
 * parquet-wasm.
 */
import zlib from 'node:zlib';
import * as arrow from 'apache-arrow';
import { snappyUncompress, type ColumnMetaData, type SchemaElement } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { readDataPage } from 'hyparquet/src/datapage.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import type { SchemaTree } from 'hyparquet/src/types.js';
import { getAvroCodec } from './avro-codecs.js';

/** How a column's raw values become Arrow values: the representation they share. */
export type PageColumnKind = 'int8' | 'int16' | 'int32' | 'int64' | 'float32' | 'float64' | 'bytes';

/** A flat column decodable here: its kind, Parquet facts and Arrow field. */
export interface PageColumn {
  readonly kind: PageColumnKind;
  readonly field: arrow.Field;
  readonly meta: ColumnMetaData;
  /** Root and leaf of the column's schema path (as hyparquet's page decoder wants it). */
  readonly schemaPath: SchemaTree[];
  readonly element: SchemaElement;
  /** 1 for an optional column (a definition level per row), 0 for a required one. */
  readonly maxDefinition: number;
}

/** Codecs whose pages are decompressed here. */
const CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD']);

const TIMESTAMP_UNITS: Record<string, arrow.TimeUnit> = {
  MILLIS: arrow.TimeUnit.MILLISECOND,
  MICROS: arrow.TimeUnit.MICROSECOND,
  NANOS: arrow.TimeUnit.NANOSECOND,
};

/**
 * The kind of a top-level leaf column of Parquet type `meta.type` that parquet-wasm returns as
 * `field`, or null when its raw values are not the Arrow values (decimals, INT96, booleans,
 * nested, dictionary-typed or unsigned Arrow fields, ...): decode those with parquet-wasm.
 */
export function pageColumnKind(field: arrow.Field, meta: ColumnMetaData, element: SchemaElement): PageColumnKind | null {
  if (!CODECS.has(meta.codec) || meta.path_in_schema.length !== 1 || element.repetition_type === 'REPEATED') return null;
  const type = field.type as arrow.DataType;
  const physical = meta.type;
  switch (type.typeId) {
    case arrow.Type.Int: {
      const t = type as arrow.Int;
      if (!t.isSigned) return null;
      if (t.bitWidth === 64) return physical === 'INT64' ? 'int64' : null;
      if (physical !== 'INT32') return null;
      return t.bitWidth === 32 ? 'int32' : t.bitWidth === 16 ? 'int16' : 'int8';
    }
    case arrow.Type.Float: {
      const t = type as arrow.Float;
      if (t.precision === arrow.Precision.DOUBLE) return physical === 'DOUBLE' ? 'float64' : null;
      return t.precision === arrow.Precision.SINGLE && physical === 'FLOAT' ? 'float32' : null;
    }
    case arrow.Type.Date:
      return (type as arrow.Date_).unit === arrow.DateUnit.DAY && physical === 'INT32' ? 'int32' : null;
    case arrow.Type.Timestamp: {
      // Stored in the unit the Arrow type has: the raw values are the Arrow values.
      const logical = element.logical_type;
      const unit =
        logical?.type === 'TIMESTAMP'
          ? TIMESTAMP_UNITS[logical.unit]
          : element.converted_type === 'TIMESTAMP_MILLIS'
            ? arrow.TimeUnit.MILLISECOND
            : element.converted_type === 'TIMESTAMP_MICROS'
              ? arrow.TimeUnit.MICROSECOND
              : undefined;
      return physical === 'INT64' && unit !== undefined && unit === (type as arrow.Timestamp).unit ? 'int64' : null;
    }
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return physical === 'BYTE_ARRAY' ? 'bytes' : null;
    default:
      return null;
  }
}

/**
 * A column chunk's dictionary, decompressed and kept as its page's bytes: fixed-width entries as a
 * typed array over them, byte-array entries as offsets into them (no object per entry).
 */
export interface PageDictionary {
  readonly count: number;
  /** Fixed-width kinds: the entries. */
  readonly values?: Int32Array | BigInt64Array | Float32Array | Float64Array;
  /** `bytes`: entry i is `bytes[offsets[i] .. offsets[i + 1])`. */
  readonly offsets?: Int32Array;
  readonly bytes?: Uint8Array;
  /** Memory it holds. */
  readonly byteLength: number;
}

/** Decompresses `compressed` (one page's data) by `codec` into `size` bytes. */
async function decompress(codec: string, compressed: Uint8Array, size: number): Promise<Uint8Array> {
  let out: Uint8Array;
  switch (codec) {
    case 'UNCOMPRESSED':
      out = compressed;
      break;
    case 'SNAPPY':
      out = new Uint8Array(size);
      snappyUncompress(compressed, out);
      break;
    case 'GZIP':
      out = zlib.gunzipSync(compressed);
      break;
    case 'ZSTD':
      out = await getAvroCodec('zstandard').decompress(compressed);
      break;
    default:
      throw new Error(`compression codec ${codec} is not decoded here`);
  }
  if (out.byteLength !== size) throw new Error(`page decompressed to ${out.byteLength} bytes, its header says ${size}`);
  return out;
}

/** A page's header and its decompressed data (data page v1 or dictionary page). */
async function openPage(column: PageColumn, bytes: Uint8Array) {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const header = parquetHeader(reader);
  const body = bytes.subarray(reader.offset, reader.offset + header.compressed_page_size);
  if (body.byteLength !== header.compressed_page_size) throw new Error('page is cut short');
  return { header, data: await decompress(column.meta.codec, body, header.uncompressed_page_size) };
}

/** Typed arrays of the fixed-width Parquet types (little-endian, as the plain encoding stores them). */
const FIXED_WIDTH: Record<
  string,
  { array: new (buffer: ArrayBuffer) => Int32Array | BigInt64Array | Float32Array | Float64Array; width: number }
> = {
  INT32: { array: Int32Array, width: 4 },
  INT64: { array: BigInt64Array, width: 8 },
  FLOAT: { array: Float32Array, width: 4 },
  DOUBLE: { array: Float64Array, width: 8 },
};

/** Aligned copy of `n` little-endian values of `width` bytes at `offset` of `bytes`. */
function copyAligned(bytes: Uint8Array, offset: number, n: number, width: number): ArrayBuffer {
  if (offset + n * width > bytes.byteLength) throw new Error(`page holds fewer than ${n} values`);
  const out = new Uint8Array(n * width);
  out.set(bytes.subarray(offset, offset + n * width));
  return out.buffer;
}

/** Decodes a dictionary page (PLAIN entries) of `column` from its bytes (header included). */
export async function decodeDictionaryPage(column: PageColumn, bytes: Uint8Array): Promise<PageDictionary> {
  const { header, data } = await openPage(column, bytes);
  const dict = header.dictionary_page_header;
  if (header.type !== 'DICTIONARY_PAGE' || dict === undefined) throw new Error(`expected a dictionary page, found ${header.type}`);
  if (dict.encoding !== 'PLAIN' && dict.encoding !== 'PLAIN_DICTIONARY') throw new Error(`dictionary encoding ${dict.encoding}`);
  const count = dict.num_values;
  const fixed = FIXED_WIDTH[column.meta.type];
  if (fixed !== undefined) {
    const values = new fixed.array(copyAligned(data, 0, count, fixed.width));
    return { count, values, byteLength: values.byteLength };
  }
  switch (column.meta.type) {
    case 'BYTE_ARRAY': {
      // Entries are length-prefixed: index them once.
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      const offsets = new Int32Array(count + 1);
      const starts = new Int32Array(count);
      let at = 0;
      let total = 0;
      for (let i = 0; i < count; i++) {
        if (at + 4 > data.byteLength) throw new Error('dictionary page is cut short');
        const length = view.getUint32(at, true);
        starts[i] = at + 4;
        at += 4 + length;
        if (at > data.byteLength) throw new Error('dictionary page is cut short');
        total += length;
        offsets[i + 1] = total;
      }
      // Entries packed without their length prefixes: the bytes of entry i are one subarray.
      const packed = new Uint8Array(total);
      for (let i = 0; i < count; i++) packed.set(data.subarray(starts[i]!, starts[i]! + offsets[i + 1]! - offsets[i]!), offsets[i]!);
      return { count, offsets, bytes: packed, byteLength: packed.byteLength + offsets.byteLength };
    }
    default:
      throw new Error(`dictionary of type ${column.meta.type}`);
  }
}

/** The selected rows of one column, collected page after page, then made into Arrow data. */
export class PageColumnRows {
  private readonly fixed: Int32Array | BigInt64Array | Float32Array | Float64Array | Int8Array | Int16Array | null;
  private readonly pieces: (Uint8Array | null)[] = [];
  private readonly validity: Uint8Array;
  private nulls = 0;
  private filled = 0;

  constructor(
    private readonly column: PageColumn,
    private readonly length: number,
  ) {
    const k = column.kind;
    this.fixed =
      k === 'int8'
        ? new Int8Array(length)
        : k === 'int16'
          ? new Int16Array(length)
          : k === 'int32'
            ? new Int32Array(length)
            : k === 'int64'
              ? new BigInt64Array(length)
              : k === 'float32'
                ? new Float32Array(length)
                : k === 'float64'
                  ? new Float64Array(length)
                  : null;
    this.validity = new Uint8Array((length + 7) >> 3);
  }

  /**
   * Adds rows `[from, to)` of a data page (its bytes, header included; rows counted from the
   * page's first row). `dictionary` is the chunk's, for dictionary-encoded pages.
   */
  async addPage(bytes: Uint8Array, from: number, to: number, dictionary: () => Promise<PageDictionary | null>): Promise<void> {
    const column = this.column;
    const { header, data } = await openPage(column, bytes);
    const daph = header.data_page_header;
    if (header.type !== 'DATA_PAGE' || daph === undefined) throw new UnsupportedPageError(`page type ${header.type}`);
    if (to > daph.num_values) throw new Error(`page holds ${daph.num_values} values, rows up to ${to} were asked`);
    const reader = { view: new DataView(data.buffer, data.byteOffset, data.byteLength), offset: 0 };
    // Definition levels of the rows up to `to` only (their 4-byte length lets the values be found).
    let levels: Uint8Array | null = null;
    if (column.maxDefinition > 0) {
      if (daph.definition_level_encoding !== 'RLE')
        throw new UnsupportedPageError(`definition levels in ${daph.definition_level_encoding}`);
      levels = new Uint8Array(to);
      readRleBitPackedHybrid(reader, 1, levels);
    }
    // Values before row `from` and before `to` (nulls have none).
    let first = from;
    let end = to;
    if (levels !== null) {
      first = 0;
      for (let r = 0; r < from; r++) first += levels[r]!;
      end = first;
      for (let r = from; r < to; r++) end += levels[r]!;
    }
    const encoding = daph.encoding;
    let value: (i: number) => unknown;
    let piece: (i: number) => Uint8Array;
    if (encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY') {
      const dict = await dictionary();
      if (dict === null) throw new Error('dictionary-encoded page in a chunk without a dictionary page');
      const width = reader.view.getUint8(reader.offset++);
      const indices = new Int32Array(end);
      if (width > 0) readRleBitPackedHybrid(reader, width, indices, data.byteLength - reader.offset);
      const entry = (i: number): number => {
        const k = indices[i]!;
        if (k >= dict.count) throw new Error(`dictionary index ${k} out of ${dict.count} entries`);
        return k;
      };
      value = (i) => dict.values![entry(i)];
      piece = (i) => {
        const k = entry(i);
        return dict.bytes!.subarray(dict.offsets![k]!, dict.offsets![k + 1]!);
      };
    } else if (encoding === 'PLAIN') {
      const base = reader.offset;
      if (column.meta.type === 'BYTE_ARRAY') {
        // Walk the length prefixes up to the last selected value; nothing made for the others.
        const starts = new Int32Array(end - first + 1);
        let at = base;
        for (let i = 0; i < end; i++) {
          if (i >= first) starts[i - first] = at;
          at += 4 + reader.view.getUint32(at, true);
        }
        if (at > data.byteLength) throw new Error('page values are cut short');
        starts[end - first] = at;
        piece = (i) => data.subarray(starts[i - first]! + 4, starts[i - first + 1]!);
        value = piece;
      } else {
        const width = column.meta.type === 'INT64' || column.meta.type === 'DOUBLE' ? 8 : 4;
        if (base + end * width > data.byteLength) throw new Error('page values are cut short');
        const fixed = this.fixed!;
        if (levels === null && fixed.BYTES_PER_ELEMENT === width) {
          // No nulls, same width (a key column): the page's stretch is the column's bytes.
          new Uint8Array(fixed.buffer).set(data.subarray(base + first * width, base + end * width), this.filled * width);
          for (let r = from; r < to; r++) this.setValid(this.filled++);
          return;
        }
        const raw = rawReader(column.meta.type, reader.view);
        value = (i) => raw(base + i * width);
        piece = () => new Uint8Array(0);
      }
    } else {
      // Other encodings (delta, byte stream split): hyparquet decodes the whole page.
      const decoded = readDataPage(data, daph, {
        type: column.meta.type,
        element: column.element,
        schemaPath: column.schemaPath,
        pathInSchema: column.meta.path_in_schema,
        codec: column.meta.codec,
        parsers: undefined as never,
      });
      const values = decoded.dataPage as ArrayLike<unknown>;
      value = (i) => values[i];
      piece = (i) => values[i] as Uint8Array;
    }
    const fixed = this.fixed;
    let v = first;
    for (let r = from; r < to; r++) {
      const at = this.filled++;
      if (levels !== null && levels[r] === 0) {
        this.nulls++;
        if (fixed === null) this.pieces.push(null);
        continue;
      }
      this.setValid(at);
      if (fixed !== null) (fixed as unknown as unknown[])[at] = value(v++);
      else this.pieces.push(piece(v++));
    }
  }

  private setValid(i: number): void {
    this.validity[i >> 3]! |= 1 << (i & 7);
  }

  /** The rows as Arrow data of the column's field type. */
  data(): arrow.Data {
    if (this.filled !== this.length) throw new Error(`${this.filled} rows decoded, ${this.length} expected`);
    const type = this.column.field.type as arrow.DataType;
    const nullBitmap = this.nulls === 0 ? undefined : this.validity;
    if (this.fixed !== null) {
      return arrow.makeData({ type, length: this.length, nullCount: this.nulls, nullBitmap, data: this.fixed } as never);
    }
    const valueOffsets = new Int32Array(this.length + 1);
    let total = 0;
    this.pieces.forEach((p, i) => {
      total += p?.byteLength ?? 0;
      valueOffsets[i + 1] = total;
    });
    const bytes = new Uint8Array(total);
    this.pieces.forEach((p, i) => {
      if (p !== null) bytes.set(p, valueOffsets[i]!);
    });
    return arrow.makeData({ type, length: this.length, nullCount: this.nulls, nullBitmap, valueOffsets, data: bytes } as never);
  }
}

/** Raised for a page this decoder does not read (data page v2): the caller decodes with parquet-wasm. */
export class UnsupportedPageError extends Error {}

/** Reads one little-endian value of a fixed-width Parquet type at a byte offset of `view`. */
function rawReader(type: string, view: DataView): (at: number) => number | bigint {
  switch (type) {
    case 'INT32':
      return (at) => view.getInt32(at, true);
    case 'INT64':
      return (at) => view.getBigInt64(at, true);
    case 'FLOAT':
      return (at) => view.getFloat32(at, true);
    case 'DOUBLE':
      return (at) => view.getFloat64(at, true);
    default:
      throw new Error(`values of type ${type}`);
  }
}
