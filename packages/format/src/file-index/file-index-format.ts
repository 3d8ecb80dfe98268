/**
 * Paimon's file-index container (`FileIndexFormat`): the indexes of some columns of one data file,
 * embedded in the manifest (`_EMBEDDED_FILE_INDEX`) or stored next to the data file as
 * `<data file>.index` (listed in `_EXTRA_FILES`).
 *
 * Version 1, which Paimon 1.x writes and this writer writes, all ints big-endian:
 *
 * | bytes | field |
 * | --- | --- |
 * | 8 | magic `1493475289347502` |
 * | 4 | version `1` |
 * | 4 | head length (bytes from the start of the file to the first body) |
 * | 4 | column count |
 * | per column: Java UTF | column name |
 * | 4 | index count of the column |
 * | per index: Java UTF, 4, 4 | index type (`bloom-filter`, `bitmap`, …), body start (from the file start), body length |
 * | 4 | redundant length, `0` (room for later versions) |
 * | … | bodies, in header order |
 *
 * Version 2 (Paimon master) moves the table to a footer with 8-byte offsets: `magic`, `version 2`,
 * bodies, the table (column count, names, index counts, types, long start, long length), the
 * footer length (int) and the tail magic `PAFIDX02`. Both are read; a start of -1 marks an index
 * written without values (Java's "empty index": no row of the file has a value there).
 */
import { CorruptFileError } from '../errors.js';
import { javaHashMapOrder, javaUtf, readJavaUtf } from './java-data-io.js';

/** The container's magic number (first 8 bytes, big-endian). */
export const FILE_INDEX_MAGIC = 1493475289347502n;
/** The container version this writer produces. */
export const FILE_INDEX_VERSION = 1;
const VERSION_2 = 2;
/** ASCII `PAFIDX02`: the last 8 bytes of a version 2 container. */
const TAIL_MAGIC = 0x5041464944583032n;
const TRAILER = 12;
/** Start position of an index written without values. */
const EMPTY_INDEX = -1;

/** Where one index body lies in a container. */
export interface FileIndexBodyRange {
  /** From the start of the container; -1 for an index written without values. */
  readonly start: number;
  readonly length: number;
}

/**
 * Serializes indexes by column name, then index type, to a version 1 container. Columns are laid
 * out in the order Java's `HashMap` iterates them, so a container matches Java's byte for byte.
 */
export function writeFileIndex(indexes: ReadonlyMap<string, ReadonlyMap<string, Uint8Array>>): Uint8Array {
  const columns = javaHashMapOrder([...indexes.keys()]);
  const bodies: Uint8Array[] = [];
  const table: { name: Uint8Array; entries: { type: Uint8Array; start: number; length: number }[] }[] = [];
  let bodyBytes = 0;
  let headLength = 8 + 4 + 4 + 4 + 4;
  for (const column of columns) {
    const types = javaHashMapOrder([...indexes.get(column)!.keys()]);
    const name = javaUtf(column);
    headLength += name.length + 4;
    const entries = types.map((t) => {
      const body = indexes.get(column)!.get(t)!;
      const entry = { type: javaUtf(t), start: bodyBytes, length: body.length };
      headLength += entry.type.length + 8;
      bodies.push(body);
      bodyBytes += body.length;
      return entry;
    });
    table.push({ name, entries });
  }
  const out = new Uint8Array(headLength + bodyBytes);
  const view = new DataView(out.buffer);
  view.setBigInt64(0, FILE_INDEX_MAGIC, false);
  view.setInt32(8, FILE_INDEX_VERSION, false);
  view.setInt32(12, headLength, false);
  view.setInt32(16, table.length, false);
  let at = 20;
  for (const { name, entries } of table) {
    out.set(name, at);
    at += name.length;
    view.setInt32(at, entries.length, false);
    at += 4;
    for (const e of entries) {
      out.set(e.type, at);
      at += e.type.length;
      view.setInt32(at, e.start + headLength, false);
      view.setInt32(at + 4, e.length, false);
      at += 8;
    }
  }
  view.setInt32(at, 0, false);
  at += 4;
  for (const body of bodies) {
    out.set(body, at);
    at += body.length;
  }
  return out;
}

/** A parsed container: the table of its indexes, and their bodies. */
export class FileIndexFile {
  private constructor(
    /** Container version (1 or 2; another version parses as an empty table). */
    readonly version: number,
    /** Index ranges by column name, then index type. */
    readonly entries: ReadonlyMap<string, ReadonlyMap<string, FileIndexBodyRange>>,
    private readonly bytes: Uint8Array,
  ) {}

  /**
   * Parses a whole container (`bytes` is kept for the bodies). A version this reader does not know
   * yields a container without indexes (it can rule nothing out) rather than an error.
   *
   * @param path names the file (or the data file of an embedded index) in errors
   * @throws CorruptFileError when the bytes are not a file index or are cut short
   */
  static parse(bytes: Uint8Array, path: string): FileIndexFile {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < 12 || view.getBigInt64(0, false) !== FILE_INDEX_MAGIC) {
      throw new CorruptFileError(path, 'not a Paimon file index (magic number missing)');
    }
    const version = view.getInt32(8, false);
    try {
      if (version === FILE_INDEX_VERSION) {
        const headLength = view.getInt32(12, false);
        if (headLength > bytes.length || headLength < 24) throw new RangeError(`head length ${headLength}`);
        return new FileIndexFile(version, readTable(bytes.subarray(16, headLength), false), bytes);
      }
      if (version === VERSION_2) {
        const end = bytes.length;
        if (view.getBigInt64(end - 8, false) !== TAIL_MAGIC) throw new RangeError('tail magic missing');
        const footerLength = view.getInt32(end - TRAILER, false);
        const from = end - TRAILER - footerLength;
        if (from < 12) throw new RangeError(`footer length ${footerLength}`);
        return new FileIndexFile(version, readTable(bytes.subarray(from, end - TRAILER), true), bytes);
      }
    } catch (e) {
      throw new CorruptFileError(path, `file index version ${version} is cut short or damaged: ${(e as Error).message}`, { cause: e });
    }
    return new FileIndexFile(version, new Map(), bytes);
  }

  /** Bytes the container holds (what keeping it in memory costs). */
  get byteLength(): number {
    return this.bytes.byteLength;
  }

  /**
   * The body of `column`'s index of `indexType`: its bytes, `'empty'` for an index written without
   * values, or null when the container has no such index.
   */
  body(column: string, indexType: string): Uint8Array | 'empty' | null {
    const range = this.entries.get(column)?.get(indexType);
    if (range === undefined) return null;
    if (range.start === EMPTY_INDEX) return 'empty';
    if (range.start < 0 || range.start + range.length > this.bytes.length) return null;
    return this.bytes.subarray(range.start, range.start + range.length);
  }
}

function readTable(head: Uint8Array, longOffsets: boolean): Map<string, Map<string, FileIndexBodyRange>> {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  let at = 0;
  const int = (): number => {
    const v = view.getInt32(at, false);
    at += 4;
    return v;
  };
  const long = (): number => {
    const v = Number(view.getBigInt64(at, false));
    at += 8;
    return v;
  };
  const utf = (): string => {
    const n = view.getUint16(at, false);
    at += 2;
    if (at + n > head.length) throw new RangeError('name runs past the header');
    const s = readJavaUtf(head.subarray(at, at + n));
    at += n;
    return s;
  };
  const out = new Map<string, Map<string, FileIndexBodyRange>>();
  const columns = int();
  for (let c = 0; c < columns; c++) {
    const name = utf();
    const count = int();
    const types = out.get(name) ?? new Map<string, FileIndexBodyRange>();
    out.set(name, types);
    for (let i = 0; i < count; i++) {
      const type = utf();
      const start = longOffsets ? long() : int();
      const length = longOffsets ? long() : int();
      types.set(type, { start, length });
    }
  }
  return out;
}
