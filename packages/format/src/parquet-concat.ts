/**
 * Concatenation of single-file Parquet encodings into one file: the row groups of each part, in
 * order, under one footer. This is how one large data file is encoded on several worker threads
 * (parquet-wasm encodes a whole file per call): each worker encodes some row groups as a file of
 * its own, and the parts are joined here without decoding any page.
 *
 * Only the footer is rewritten. It is Thrift compact protocol; this module reads it into a tree that
 * keeps every field's wire type (so fields it does not know survive unchanged), shifts the file
 * offsets of each part's row groups, column chunks, page indexes and bloom filters by where the
 * part's bytes land, and writes the tree back.
 */
import { FormatError } from './errors.js';
import type { ParquetCompression } from './parquet-writer.js';

const MAGIC = 0x31524150; // "PAR1" little-endian

// Thrift compact protocol wire types.
const T_STOP = 0;
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

type TValue =
  | { readonly t: typeof T_TRUE | typeof T_FALSE }
  | { readonly t: typeof T_BYTE | typeof T_I16 | typeof T_I32; v: number }
  | { readonly t: typeof T_I64; v: bigint }
  | { readonly t: typeof T_DOUBLE; readonly v: number }
  | { readonly t: typeof T_BINARY; readonly v: Uint8Array }
  | { readonly t: typeof T_LIST | typeof T_SET; readonly elem: number; readonly v: TValue[] }
  | { readonly t: typeof T_STRUCT; readonly v: TStruct };

/** Fields of a struct in wire order. */
type TStruct = { id: number; value: TValue }[];

class Reader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.bytes.length) throw new FormatError('Parquet footer ends inside a Thrift value');
    return this.bytes[this.pos++]!;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  struct(): TStruct {
    const fields: TStruct = [];
    let id = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === T_STOP) return fields;
      const delta = header >> 4;
      id = delta !== 0 ? id + delta : Number(this.zigzag());
      fields.push({ id, value: this.value(type) });
    }
  }

  value(type: number): TValue {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return { t: type };
      case T_BYTE: {
        const b = this.byte();
        return { t: T_BYTE, v: b > 127 ? b - 256 : b };
      }
      case T_I16:
      case T_I32:
        return { t: type, v: Number(this.zigzag()) };
      case T_I64:
        return { t: T_I64, v: this.zigzag() };
      case T_DOUBLE: {
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 8);
        this.pos += 8;
        return { t: T_DOUBLE, v: view.getFloat64(0, true) };
      }
      case T_BINARY: {
        const n = Number(this.varint());
        if (this.pos + n > this.bytes.length) throw new FormatError('Parquet footer ends inside a Thrift binary');
        const v = this.bytes.subarray(this.pos, this.pos + n);
        this.pos += n;
        return { t: T_BINARY, v };
      }
      case T_LIST:
      case T_SET: {
        const header = this.byte();
        const elem = header & 0x0f;
        let n = header >> 4;
        if (n === 15) n = Number(this.varint());
        const v: TValue[] = [];
        // Booleans in a list are one byte each, not folded into a type nibble.
        for (let i = 0; i < n; i++)
          v.push(elem === T_TRUE || elem === T_FALSE ? { t: this.byte() === 1 ? T_TRUE : T_FALSE } : this.value(elem));
        return { t: type, elem, v };
      }
      case T_STRUCT:
        return { t: T_STRUCT, v: this.struct() };
      default:
        throw new FormatError(`Parquet footer holds a Thrift type ${type === T_MAP ? 'map' : type} that the writer does not produce`);
    }
  }
}

class Writer {
  private buf = new Uint8Array(1024);
  length = 0;

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b & 0xff;
  }

  varint(n: bigint): void {
    let v = n;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) b |= 0x80;
      this.byte(b);
    } while (v !== 0n);
  }

  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  struct(fields: TStruct): void {
    let last = 0;
    for (const { id, value } of fields) {
      const type = value.t;
      const delta = id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(id));
      }
      last = id;
      if (value.t !== T_TRUE && value.t !== T_FALSE) this.value(value);
    }
    this.byte(T_STOP);
  }

  value(value: TValue): void {
    switch (value.t) {
      case T_TRUE:
      case T_FALSE:
        this.byte(value.t === T_TRUE ? 1 : 2);
        return;
      case T_BYTE:
        this.byte(value.v);
        return;
      case T_I16:
      case T_I32:
        this.zigzag(BigInt(value.v));
        return;
      case T_I64:
        this.zigzag(value.v);
        return;
      case T_DOUBLE: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, value.v, true);
        this.raw(b);
        return;
      }
      case T_BINARY:
        this.varint(BigInt(value.v.length));
        this.raw(value.v);
        return;
      case T_LIST:
      case T_SET: {
        const n = value.v.length;
        if (n < 15) this.byte((n << 4) | value.elem);
        else {
          this.byte(0xf0 | value.elem);
          this.varint(BigInt(n));
        }
        for (const e of value.v) this.value(e);
        return;
      }
      case T_STRUCT:
        this.struct(value.v);
        return;
    }
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

function field(s: TStruct, id: number): TValue | undefined {
  return s.find((f) => f.id === id)?.value;
}

function set(s: TStruct, id: number, value: TValue): void {
  const i = s.findIndex((f) => f.id === id);
  if (i >= 0) s[i] = { id, value };
  else {
    s.push({ id, value });
    s.sort((a, b) => a.id - b.id);
  }
}

function shiftI64(s: TStruct, id: number, by: bigint): void {
  const v = field(s, id);
  if (v?.t === T_I64) v.v += by;
}

/**
 * A Parquet file taken apart: `data` (its row groups' pages, from offset 4), the page indexes
 * behind them, and its footer tree.
 */
function splitFile(bytes: Uint8Array, index: number): { bytes: Uint8Array; dataEnd: number; meta: TStruct } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || view.getUint32(0, true) !== MAGIC || view.getUint32(bytes.length - 4, true) !== MAGIC) {
    throw new FormatError(`Parquet part ${index} is not a Parquet file`);
  }
  const metaLength = view.getUint32(bytes.length - 8, true);
  const metaStart = bytes.length - 8 - metaLength;
  if (metaStart < 4) throw new FormatError(`Parquet part ${index}: footer length ${metaLength} exceeds the file`);
  const meta = new Reader(bytes.subarray(metaStart, bytes.length - 8)).struct();
  // Page indexes follow all row groups (parquet-rs writes them when it closes the file).
  let dataEnd = metaStart;
  for (const c of columnChunks(meta)) {
    for (const id of [CC_OFFSET_INDEX_OFFSET, CC_COLUMN_INDEX_OFFSET]) {
      const v = field(c, id);
      if (v?.t === T_I64) dataEnd = Math.min(dataEnd, Number(v.v));
    }
  }
  return { bytes, dataEnd, meta };
}

function* columnChunks(meta: TStruct): Generator<TStruct> {
  const groups = field(meta, FMD_ROW_GROUPS);
  for (const g of groups?.t === T_LIST ? groups.v : []) {
    if (g.t !== T_STRUCT) continue;
    const columns = field(g.v, RG_COLUMNS);
    for (const c of columns?.t === T_LIST ? columns.v : []) if (c.t === T_STRUCT) yield c.v;
  }
}

// FileMetaData / RowGroup / ColumnChunk / ColumnMetaData / OffsetIndex field ids (parquet.thrift).
const FMD_SCHEMA = 2;
const FMD_NUM_ROWS = 3;
const FMD_ROW_GROUPS = 4;
const RG_COLUMNS = 1;
const RG_NUM_ROWS = 3;
const RG_FILE_OFFSET = 5;
const RG_ORDINAL = 7;
const CC_FILE_OFFSET = 2;
const CC_META = 3;
const CC_OFFSET_INDEX_OFFSET = 4;
const CC_OFFSET_INDEX_LENGTH = 5;
const CC_COLUMN_INDEX_OFFSET = 6;
const CC_COLUMN_INDEX_LENGTH = 7;
const CMD_CODEC = 4;
const CMD_DATA_PAGE_OFFSET = 9;
const CMD_INDEX_PAGE_OFFSET = 10;
const CMD_DICTIONARY_PAGE_OFFSET = 11;
const CMD_BLOOM_FILTER_OFFSET = 14;
const CMD_BLOOM_FILTER_LENGTH = 15;
const OI_PAGE_LOCATIONS = 1;
const PL_OFFSET = 1;

/**
 * Joins Parquet files that share one schema into one file holding all their row groups in order.
 * The first part's file-level metadata (schema, key-value metadata, `created_by`, column orders)
 * is kept; row counts add up; every offset is rebased, including the page offsets inside the
 * offset indexes (which are rewritten behind the row groups). Pages are copied byte for byte.
 *
 * @throws FormatError when a part is not a Parquet file or its schema differs from the first's.
 */
export function concatParquetFiles(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 0) throw new FormatError('concatParquetFiles needs at least one part');
  if (parts.length === 1) return parts[0]!;
  const split = parts.map((p, i) => splitFile(p, i));
  const first = split[0]!.meta;
  const schemaBytes = encodeValue(field(first, FMD_SCHEMA));
  const rowGroups: TValue[] = [];
  let numRows = 0n;
  let dataLength = 0;
  for (const [i, { meta, dataEnd }] of split.entries()) {
    if (i > 0 && !sameBytes(encodeValue(field(meta, FMD_SCHEMA)), schemaBytes)) {
      throw new FormatError(`Parquet part ${i} has another schema than part 0`);
    }
    dataLength += dataEnd - 4;
  }
  // Page indexes of every part go behind all row groups, as one writer would have put them.
  const indexes = new Writer();
  const indexStart = BigInt(4 + dataLength);
  let position = 4n; // where the current part's data lands
  for (const { bytes, meta, dataEnd } of split) {
    const by = position - 4n;
    const groups = field(meta, FMD_ROW_GROUPS);
    for (const g of groups?.t === T_LIST ? groups.v : []) {
      if (g.t !== T_STRUCT) continue;
      shiftI64(g.v, RG_FILE_OFFSET, by);
      if (field(g.v, RG_ORDINAL) !== undefined) set(g.v, RG_ORDINAL, { t: T_I16, v: rowGroups.length });
      rowGroups.push(g);
    }
    for (const c of columnChunks(meta)) {
      shiftI64(c, CC_FILE_OFFSET, by);
      const m = field(c, CC_META);
      if (m?.t === T_STRUCT) {
        for (const id of [CMD_DATA_PAGE_OFFSET, CMD_INDEX_PAGE_OFFSET, CMD_DICTIONARY_PAGE_OFFSET]) shiftI64(m.v, id, by);
        const bloom = field(m.v, CMD_BLOOM_FILTER_OFFSET);
        if (bloom?.t === T_I64 && bloom.v < BigInt(dataEnd)) bloom.v += by;
        else if (bloom !== undefined) dropFields(m.v, [CMD_BLOOM_FILTER_OFFSET, CMD_BLOOM_FILTER_LENGTH]);
      }
      const columnIndex = indexBytes(bytes, c, CC_COLUMN_INDEX_OFFSET, CC_COLUMN_INDEX_LENGTH);
      if (columnIndex) {
        set(c, CC_COLUMN_INDEX_OFFSET, { t: T_I64, v: indexStart + BigInt(indexes.length) });
        indexes.raw(columnIndex);
      }
      const offsetIndex = indexBytes(bytes, c, CC_OFFSET_INDEX_OFFSET, CC_OFFSET_INDEX_LENGTH);
      if (offsetIndex) {
        const tree = new Reader(offsetIndex).struct();
        const pages = field(tree, OI_PAGE_LOCATIONS);
        for (const p of pages?.t === T_LIST ? pages.v : []) if (p.t === T_STRUCT) shiftI64(p.v, PL_OFFSET, by);
        const start = indexes.length;
        indexes.struct(tree);
        set(c, CC_OFFSET_INDEX_OFFSET, { t: T_I64, v: indexStart + BigInt(start) });
        set(c, CC_OFFSET_INDEX_LENGTH, { t: T_I32, v: indexes.length - start });
      }
    }
    const n = field(meta, FMD_NUM_ROWS);
    numRows += n?.t === T_I64 ? n.v : 0n;
    position += BigInt(dataEnd - 4);
  }
  const meta = first.map((f) => ({ ...f }));
  set(meta, FMD_NUM_ROWS, { t: T_I64, v: numRows });
  set(meta, FMD_ROW_GROUPS, { t: T_LIST, elem: T_STRUCT, v: rowGroups });
  const w = new Writer();
  w.struct(meta);
  const footer = w.bytes();
  const index = indexes.bytes();
  return assembleFile(
    split.map(({ bytes, dataEnd }) => bytes.subarray(4, dataEnd)),
    4 + dataLength,
    index,
    footer,
  );
}

/** A Parquet file of `data` (ending at `dataEnd`, magic included), then the page indexes and the footer. */
function assembleFile(data: readonly Uint8Array[], dataEnd: number, index: Uint8Array, footer: Uint8Array): Uint8Array {
  const out = new Uint8Array(dataEnd + index.length + footer.length + 8);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  let at = 4;
  for (const piece of data) {
    out.set(piece, at);
    at += piece.length;
  }
  out.set(index, at);
  at += index.length;
  out.set(footer, at);
  at += footer.length;
  view.setUint32(at, footer.length, true);
  view.setUint32(at + 4, MAGIC, true);
  return out;
}

/** The bytes of a page index of a column chunk (or null when it has none or it lies outside the file). */
function indexBytes(bytes: Uint8Array, chunk: TStruct, offsetId: number, lengthId: number): Uint8Array | null {
  const offset = field(chunk, offsetId);
  const length = field(chunk, lengthId);
  if (offset?.t !== T_I64 || length?.t !== T_I32) {
    dropFields(chunk, [offsetId, lengthId]);
    return null;
  }
  const start = Number(offset.v);
  if (start < 4 || start + length.v > bytes.length - 8) {
    dropFields(chunk, [offsetId, lengthId]);
    return null;
  }
  return bytes.subarray(start, start + length.v);
}

function dropFields(s: TStruct, ids: readonly number[]): void {
  for (let i = s.length - 1; i >= 0; i--) if (ids.includes(s[i]!.id)) s.splice(i, 1);
}

function encodeValue(v: TValue | undefined): Uint8Array {
  if (v === undefined) return new Uint8Array(0);
  const w = new Writer();
  w.value(v);
  return w.bytes().slice();
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Thrift `CompressionCodec` of each {@link ParquetCompression} as the writer encodes it (`lz4` is LZ4_RAW). */
const CODEC_IDS: Readonly<Record<ParquetCompression, number>> = { none: 0, snappy: 1, gzip: 2, zstd: 6, lz4: 7 };

/**
 * Why the row groups of Parquet file `file` cannot be copied as they are into a file the writer
 * encodes like `reference` (a file it wrote, rows or not) with `compression`, or null when they
 * can: every row group must hold at least `minGroupRows` rows (smaller groups are worth
 * re-encoding into bigger ones), the schema must be the same down to the bytes of its footer
 * entries (names, types, repetition, field ids) and every column chunk must use that compression.
 * Reads the footers only.
 *
 * @throws FormatError when either is not a Parquet file.
 */
export function rowGroupCopyBlocker(
  file: Uint8Array,
  reference: Uint8Array,
  compression: ParquetCompression,
  minGroupRows: number,
): string | null {
  const meta = splitFile(file, 0).meta;
  const groups = field(meta, FMD_ROW_GROUPS);
  const list = groups?.t === T_LIST ? groups.v : [];
  if (list.length === 0) return 'it has no row groups';
  for (const [i, g] of list.entries()) {
    if (g.t !== T_STRUCT) return `row group ${i} is not a struct`;
    const n = field(g.v, RG_NUM_ROWS);
    const rows = n?.t === T_I64 ? Number(n.v) : 0;
    if (rows < minGroupRows) return `row group ${i} has ${rows} rows, fewer than ${minGroupRows}`;
  }
  const codec = CODEC_IDS[compression];
  for (const c of columnChunks(meta)) {
    const m = field(c, CC_META);
    const v = m?.t === T_STRUCT ? field(m.v, CMD_CODEC) : undefined;
    if (v?.t !== T_I32 || v.v !== codec) return `a column chunk is not compressed with ${compression}`;
  }
  const expected = encodeValue(field(splitFile(reference, 1).meta, FMD_SCHEMA));
  if (!sameBytes(encodeValue(field(meta, FMD_SCHEMA)), expected)) return 'its Parquet schema differs from the one the writer encodes';
  return null;
}

// SchemaElement / ColumnMetaData / RowGroup / FileMetaData field ids used by the column stitch.
const SE_NUM_CHILDREN = 5;
const CMD_TOTAL_COMPRESSED_SIZE = 7;
const RG_TOTAL_BYTE_SIZE = 2;
const RG_TOTAL_COMPRESSED_SIZE = 6;

/** One part of {@link stitchParquetColumns}: a one-row-group file holding some top-level columns. */
export interface ParquetColumnPart {
  /** A Parquet file of one row group whose schema is the fields `fields` of the whole schema, in that order. */
  readonly bytes: Uint8Array;
  /** Indexes of the top-level fields (of the whole schema) this part holds, ascending. */
  readonly fields: readonly number[];
}

/** The top-level fields of a footer's schema: each one's schema elements and number of leaf columns. */
function topLevelFields(meta: TStruct, what: string): { elements: TValue[]; leaves: number }[] {
  const schema = field(meta, FMD_SCHEMA);
  const elements = schema?.t === T_LIST ? schema.v : [];
  const children = (e: TValue | undefined): number => {
    const n = e?.t === T_STRUCT ? field(e.v, SE_NUM_CHILDREN) : undefined;
    return n?.t === T_I32 ? n.v : 0;
  };
  if (elements.length === 0) throw new FormatError(`${what} has no schema`);
  const out: { elements: TValue[]; leaves: number }[] = [];
  let at = 1;
  // Walks one subtree in depth-first order (the order of the footer's schema list).
  const walk = (): number => {
    const e = elements[at++];
    if (e === undefined) throw new FormatError(`${what}: its schema list ends inside a group`);
    const n = children(e);
    if (n === 0) return 1;
    let leaves = 0;
    for (let i = 0; i < n; i++) leaves += walk();
    return leaves;
  };
  for (let i = 0; i < children(elements[0]); i++) {
    const start = at;
    const leaves = walk();
    out.push({ elements: elements.slice(start, at), leaves });
  }
  if (at !== elements.length) throw new FormatError(`${what}: its schema list has elements outside the root`);
  return out;
}

function i64(s: TStruct, id: number): bigint | undefined {
  const v = field(s, id);
  return v?.t === T_I64 ? v.v : undefined;
}

/**
 * Builds one Parquet file of one row group from files that each hold some top-level columns of
 * the same rows (encoded on different workers with the same writer settings). Column chunks are
 * independent in Parquet, so the row group is every part's chunks, their bytes copied as they are
 * and laid out in the schema's column order (as one writer lays them out); each chunk's page,
 * dictionary and page-index offsets move with its bytes, the offset indexes' page locations too.
 *
 * `template` is a file of the whole schema written with the same settings (no rows needed): its
 * file-level metadata (schema, key-value metadata such as `ARROW:schema`, `created_by`, column
 * orders) describes the whole file and is kept. Every part's schema entries must equal the
 * template's entries of its fields byte for byte, and the parts must cover every field once.
 * Bloom filters are dropped (the writer does not write them).
 *
 * @throws FormatError when a part is not a one-row-group Parquet file, its schema or row count
 *   disagrees, or the parts do not cover the template's fields exactly once.
 */
export function stitchParquetColumns(template: Uint8Array, parts: readonly ParquetColumnPart[]): Uint8Array {
  const base = splitFile(template, -1).meta;
  const fields = topLevelFields(base, 'the template file');
  const owner = fieldOwners(parts, fields.length);
  const split = parts.map((p, i) => splitPart(p, i, fields));
  const rows = split[0]?.rows;
  for (const [i, s] of split.entries()) {
    if (s.rows === undefined || s.rows !== rows) throw new FormatError(`Parquet column part ${i} has ${s.rows} rows, part 0 has ${rows}`);
  }
  if (rows === undefined) throw new FormatError('stitchParquetColumns needs at least one part');
  const layout = layOutChunks(fields.length, owner, split);
  const index = writePageIndexes(layout.indexes, layout.position);
  const footer = stitchedFooter(base, split, layout.columns, rows);
  return assembleFile(
    layout.copies.map((c) => c.from.subarray(c.start, c.start + c.length)),
    layout.position,
    index,
    footer,
  );
}

/** Which part holds each field, and where in the part: every field exactly once. */
function fieldOwners(parts: readonly ParquetColumnPart[], fieldCount: number): { part: number; at: number }[] {
  const owner: { part: number; at: number }[] = [];
  for (const [p, part] of parts.entries()) {
    for (const [at, f] of part.fields.entries()) {
      if (!Number.isInteger(f) || f < 0 || f >= fieldCount) throw new FormatError(`Parquet column part ${p}: no field ${f} in the schema`);
      if (owner[f] !== undefined) throw new FormatError(`Parquet column part ${p}: field ${f} is also in part ${owner[f]!.part}`);
      owner[f] = { part: p, at };
    }
  }
  for (let f = 0; f < fieldCount; f++) if (owner[f] === undefined) throw new FormatError(`Parquet column parts: no part holds field ${f}`);
  return owner;
}

/** A part split into pages and footer, checked against the template, with its one row group's chunks per field. */
interface SplitPart {
  readonly bytes: Uint8Array;
  readonly dataEnd: number;
  readonly group: TStruct;
  /** The column chunks of each of the part's fields, in order. */
  readonly byField: TStruct[][];
  readonly rows: bigint | undefined;
}

function splitPart(p: ParquetColumnPart, i: number, fields: readonly { elements: TValue[] }[]): SplitPart {
  const s = splitFile(p.bytes, i);
  const own = topLevelFields(s.meta, `Parquet column part ${i}`);
  if (own.length !== p.fields.length) {
    throw new FormatError(`Parquet column part ${i} has ${own.length} top-level fields, expected ${p.fields.length}`);
  }
  for (const [at, f] of p.fields.entries()) {
    const a = encodeValue({ t: T_LIST, elem: T_STRUCT, v: own[at]!.elements });
    const b = encodeValue({ t: T_LIST, elem: T_STRUCT, v: fields[f]!.elements });
    if (!sameBytes(a, b)) throw new FormatError(`Parquet column part ${i}: field ${f} is encoded with another schema than the template's`);
  }
  const groups = field(s.meta, FMD_ROW_GROUPS);
  const list = groups?.t === T_LIST ? groups.v : [];
  const group = list[0];
  if (list.length !== 1 || group?.t !== T_STRUCT)
    throw new FormatError(`Parquet column part ${i} has ${list.length} row groups, expected 1`);
  const columns = field(group.v, RG_COLUMNS);
  const chunks = (columns?.t === T_LIST ? columns.v : []).map((c) => {
    if (c.t !== T_STRUCT) throw new FormatError(`Parquet column part ${i}: a column chunk is not a struct`);
    return c.v;
  });
  const leaves = own.reduce((n, f) => n + f.leaves, 0);
  if (chunks.length !== leaves) throw new FormatError(`Parquet column part ${i} has ${chunks.length} column chunks for ${leaves} columns`);
  const byField: TStruct[][] = [];
  let c = 0;
  for (const f of own) {
    byField.push(chunks.slice(c, c + f.leaves));
    c += f.leaves;
  }
  return { bytes: s.bytes, dataEnd: s.dataEnd, group: group.v, byField, rows: i64(group.v, RG_NUM_ROWS) };
}

/** A column chunk's page index bytes, to be written again behind the stitched row group. */
interface ChunkIndexes {
  readonly chunk: TStruct;
  readonly columnIndex: Uint8Array | null;
  readonly offsetIndex: TStruct | null;
}

/**
 * Lays the chunks out in the schema's column order, as one writer would have written them: the
 * byte ranges to copy, the chunks' metadata with their offsets moved to the new positions, and
 * the end of the pages.
 */
function layOutChunks(
  fieldCount: number,
  owner: readonly { part: number; at: number }[],
  split: readonly SplitPart[],
): { copies: { from: Uint8Array; start: number; length: number }[]; columns: TValue[]; indexes: ChunkIndexes[]; position: number } {
  const copies: { from: Uint8Array; start: number; length: number }[] = [];
  const columns: TValue[] = [];
  const indexes: ChunkIndexes[] = [];
  let position = 4;
  for (let f = 0; f < fieldCount; f++) {
    const { part, at } = owner[f]!;
    const s = split[part]!;
    for (const chunk of s.byField[at]!) {
      const { start, length, indexes: chunkIndexes } = relocateChunk(chunk, s, part, position);
      copies.push({ from: s.bytes, start, length });
      indexes.push(chunkIndexes);
      columns.push({ t: T_STRUCT, v: chunk });
      position += length;
    }
  }
  return { copies, columns, indexes, position };
}

/**
 * Moves one column chunk (its metadata, in place) to `position` of the stitched file; returns the
 * byte range of its pages in the part and its page indexes (offset index moved too). Bloom filters
 * are dropped.
 */
function relocateChunk(
  chunk: TStruct,
  s: SplitPart,
  part: number,
  position: number,
): { start: number; length: number; indexes: ChunkIndexes } {
  const m = field(chunk, CC_META);
  if (m?.t !== T_STRUCT) throw new FormatError(`Parquet column part ${part}: a column chunk has no metadata`);
  const data = i64(m.v, CMD_DATA_PAGE_OFFSET);
  const dict = i64(m.v, CMD_DICTIONARY_PAGE_OFFSET);
  const size = i64(m.v, CMD_TOTAL_COMPRESSED_SIZE);
  if (data === undefined || size === undefined)
    throw new FormatError(`Parquet column part ${part}: a column chunk lacks its offset or size`);
  const start = Number(dict !== undefined && dict > 0n && dict < data ? dict : data);
  const length = Number(size);
  if (start < 4 || start + length > s.dataEnd) {
    throw new FormatError(`Parquet column part ${part}: a column chunk at ${start} (+${length}) lies outside the part's pages`);
  }
  const by = BigInt(position - start);
  shiftI64(chunk, CC_FILE_OFFSET, by);
  for (const id of [CMD_DATA_PAGE_OFFSET, CMD_INDEX_PAGE_OFFSET, CMD_DICTIONARY_PAGE_OFFSET]) shiftI64(m.v, id, by);
  dropFields(m.v, [CMD_BLOOM_FILTER_OFFSET, CMD_BLOOM_FILTER_LENGTH]);
  const columnIndex = indexBytes(s.bytes, chunk, CC_COLUMN_INDEX_OFFSET, CC_COLUMN_INDEX_LENGTH);
  const offsetBytes = indexBytes(s.bytes, chunk, CC_OFFSET_INDEX_OFFSET, CC_OFFSET_INDEX_LENGTH);
  let offsetIndex: TStruct | null = null;
  if (offsetBytes) {
    offsetIndex = new Reader(offsetBytes).struct();
    const pages = field(offsetIndex, OI_PAGE_LOCATIONS);
    for (const p of pages?.t === T_LIST ? pages.v : []) if (p.t === T_STRUCT) shiftI64(p.v, PL_OFFSET, by);
  }
  return { start, length, indexes: { chunk, columnIndex, offsetIndex } };
}

/**
 * Page indexes behind the row group (the pages end at `position`), column indexes first, as
 * parquet-rs writes them; the chunks' metadata is pointed at them.
 */
function writePageIndexes(indexes: readonly ChunkIndexes[], position: number): Uint8Array {
  const index = new Writer();
  for (const e of indexes) {
    if (!e.columnIndex) continue;
    set(e.chunk, CC_COLUMN_INDEX_OFFSET, { t: T_I64, v: BigInt(position + index.length) });
    index.raw(e.columnIndex);
  }
  for (const e of indexes) {
    if (!e.offsetIndex) continue;
    const start = index.length;
    index.struct(e.offsetIndex);
    set(e.chunk, CC_OFFSET_INDEX_OFFSET, { t: T_I64, v: BigInt(position + start) });
    set(e.chunk, CC_OFFSET_INDEX_LENGTH, { t: T_I32, v: index.length - start });
  }
  return index.bytes();
}

/**
 * The footer: the template's file metadata with one row group of all the columns. The first
 * part's row group keeps its fields (sorting columns, say); the sizes add up.
 */
function stitchedFooter(base: TStruct, split: readonly SplitPart[], columns: TValue[], rows: bigint): Uint8Array {
  const group = split[0]!.group.map((f) => ({ ...f }));
  set(group, RG_COLUMNS, { t: T_LIST, elem: T_STRUCT, v: columns });
  for (const id of [RG_TOTAL_BYTE_SIZE, RG_TOTAL_COMPRESSED_SIZE]) {
    if (field(group, id) === undefined) continue;
    let sum = 0n;
    for (const s of split) sum += i64(s.group, id) ?? 0n;
    set(group, id, { t: T_I64, v: sum });
  }
  if (field(group, RG_FILE_OFFSET) !== undefined) set(group, RG_FILE_OFFSET, { t: T_I64, v: 4n });
  if (field(group, RG_ORDINAL) !== undefined) set(group, RG_ORDINAL, { t: T_I16, v: 0 });
  const meta = base.map((f) => ({ ...f }));
  set(meta, FMD_NUM_ROWS, { t: T_I64, v: rows });
  set(meta, FMD_ROW_GROUPS, { t: T_LIST, elem: T_STRUCT, v: [{ t: T_STRUCT, v: group }] });
  const w = new Writer();
  w.struct(meta);
  return w.bytes();
}
