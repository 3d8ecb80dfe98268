/**
 * Deletion-vector index files (`index/index-*`, index type `DELETION_VECTORS`): per data file, the
 * set of deleted row positions.
 *
 * File layout: byte 0 = version 1; then for each data file, at the offset its
 * {@link DeletionVectorRange} names: int32 BE `size`, `size` bytes (int32 magic + bitmap), int32 BE
 * CRC32 of those `size` bytes. Magic 1581511376 (big-endian) announces a 32-bit portable
 * RoaringBitmap; 1681511377 (little-endian, Iceberg-compatible, `deletion-vectors.bitmap64`) a
 * 64-bit portable bitmap.
 *
 * Writing follows Java's `DeletionFileWriter`: the version byte, then each vector framed as above
 * in the order given, each range recording the offset of its size field, the framed length
 * without size and CRC, and the cardinality.
 */
import zlib from 'node:zlib';
import { CorruptFileError } from './errors.js';
import type { DeletionVectorRange } from './index-manifest.js';
import type { ManifestIO } from './manifest-fields.js';
import { MutableRoaringBitmap32, RoaringBitmap32, RoaringBitmap64 } from './roaring.js';

/** Version byte at the start of a DV index file. */
export const DELETION_VECTOR_FILE_VERSION = 1;
/** Magic of 32-bit bitmap vectors, stored big-endian. */
export const DV_MAGIC_BITMAP32 = 1581511376;
/** Magic of 64-bit bitmap vectors, stored little-endian. */
export const DV_MAGIC_BITMAP64 = 1681511377;

/** Deleted row positions of one data file. */
export interface DeletionVector {
  /** Number of deleted rows. */
  readonly cardinality: number;
  /** Whether the row at 0-based position `pos` of the data file is deleted. */
  isDeleted(pos: number | bigint): boolean;
  /** Deleted positions in increasing order. */
  positions(): IterableIterator<number>;
}

class Bitmap32DeletionVector implements DeletionVector {
  constructor(private readonly bitmap: RoaringBitmap32) {}
  get cardinality(): number {
    return this.bitmap.cardinality;
  }
  isDeleted(pos: number | bigint): boolean {
    const p = Number(pos);
    return this.bitmap.contains(p);
  }
  positions(): IterableIterator<number> {
    return this.bitmap.values();
  }
}

class Bitmap64DeletionVector implements DeletionVector {
  constructor(private readonly bitmap: RoaringBitmap64) {}
  get cardinality(): number {
    return this.bitmap.cardinality;
  }
  isDeleted(pos: number | bigint): boolean {
    return this.bitmap.contains(pos);
  }
  positions(): IterableIterator<number> {
    return this.bitmap.values();
  }
}

/**
 * Decodes one serialized vector: `bytes` starts at its int32 size field and holds at least
 * size + 8 bytes. `expectedLength` (the range's `f2`) and `expectedCardinality` are checked when
 * given.
 *
 * @throws CorruptFileError naming `path` on a size, magic, CRC, bitmap or cardinality mismatch.
 */
export function decodeDeletionVector(
  bytes: Uint8Array,
  path: string,
  expected: { readonly length?: number; readonly cardinality?: number | null; readonly dataFileName?: string } = {},
): DeletionVector {
  const what = expected.dataFileName === undefined ? 'deletion vector' : `deletion vector of '${expected.dataFileName}'`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4) throw new CorruptFileError(path, `${what} is truncated before its size field`);
  const size = view.getInt32(0, false);
  if (expected.length !== undefined && size !== expected.length) {
    throw new CorruptFileError(path, `${what} stores size ${size} but the index manifest says ${expected.length}`);
  }
  if (size < 4 || 4 + size + 4 > bytes.length) {
    throw new CorruptFileError(path, `${what} is truncated or has an invalid size ${size} (${bytes.length} bytes available)`);
  }
  const body = bytes.subarray(4, 4 + size);
  const storedCrc = view.getUint32(4 + size, false);
  const actualCrc = zlib.crc32(body) >>> 0;
  if (storedCrc !== actualCrc) {
    throw new CorruptFileError(path, `${what} CRC32 mismatch (stored ${storedCrc}, computed ${actualCrc})`);
  }
  const bodyView = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let dv: DeletionVector;
  let consumed: number;
  try {
    if (bodyView.getInt32(0, false) === DV_MAGIC_BITMAP32) {
      const { bitmap, byteLength } = RoaringBitmap32.deserialize(body, 4);
      dv = new Bitmap32DeletionVector(bitmap);
      consumed = byteLength;
    } else if (bodyView.getInt32(0, true) === DV_MAGIC_BITMAP64) {
      const { bitmap, byteLength } = RoaringBitmap64.deserialize(body, 4);
      dv = new Bitmap64DeletionVector(bitmap);
      consumed = byteLength;
    } else {
      throw new CorruptFileError(
        path,
        `${what} has unknown magic ${bodyView.getInt32(0, false)} (expected ${DV_MAGIC_BITMAP32} BE or ${DV_MAGIC_BITMAP64} LE)`,
      );
    }
  } catch (err) {
    if (err instanceof CorruptFileError) throw err;
    throw new CorruptFileError(path, `${what}: ${(err as Error).message}`, { cause: err });
  }
  if (consumed !== size - 4) {
    throw new CorruptFileError(path, `${what}: bitmap occupies ${consumed} bytes but the vector is ${size - 4} bytes after the magic`);
  }
  if (expected.cardinality !== undefined && expected.cardinality !== null && expected.cardinality !== dv.cardinality) {
    throw new CorruptFileError(path, `${what} holds ${dv.cardinality} positions but the index manifest says ${expected.cardinality}`);
  }
  return dv;
}

/**
 * Decodes the vectors of a whole DV index file for the given ranges (from its index-manifest
 * entry). Returns data file name → vector.
 */
export function decodeDeletionVectorFile(
  bytes: Uint8Array,
  ranges: Iterable<DeletionVectorRange>,
  path: string,
): Map<string, DeletionVector> {
  if (bytes.length < 1) throw new CorruptFileError(path, 'deletion vector file is empty');
  if (bytes[0] !== DELETION_VECTOR_FILE_VERSION) {
    throw new CorruptFileError(path, `unsupported deletion vector file version ${bytes[0]} (expected ${DELETION_VECTOR_FILE_VERSION})`);
  }
  const out = new Map<string, DeletionVector>();
  for (const range of ranges) {
    if (range.offset < 1 || range.offset + 8 + range.length > bytes.length) {
      throw new CorruptFileError(
        path,
        `deletion vector range of '${range.dataFileName}' (offset ${range.offset}, length ${range.length}) lies outside the ${bytes.length}-byte file`,
      );
    }
    out.set(
      range.dataFileName,
      decodeDeletionVector(bytes.subarray(range.offset, range.offset + 8 + range.length), path, {
        length: range.length,
        cardinality: range.cardinality,
        dataFileName: range.dataFileName,
      }),
    );
  }
  return out;
}

/** Reads a DV index file and decodes the vectors of `ranges`. */
export async function readDeletionVectors(
  io: Pick<ManifestIO, 'read'>,
  path: string,
  ranges: Iterable<DeletionVectorRange>,
): Promise<Map<string, DeletionVector>> {
  return decodeDeletionVectorFile(await io.read(path), ranges, path);
}

/** Reads just one vector with a ranged read (for large index files on object stores). */
export async function readDeletionVector(
  io: { readRange(path: string, offset: number, length: number): Promise<Uint8Array> },
  path: string,
  range: DeletionVectorRange,
): Promise<DeletionVector> {
  const bytes = await io.readRange(path, range.offset, 4 + range.length + 4);
  return decodeDeletionVector(bytes, path, {
    length: range.length,
    cardinality: range.cardinality,
    dataFileName: range.dataFileName,
  });
}

/** Where one data file's vector lies: its DV index file and the range in it. */
export interface DeletionVectorLocation {
  readonly path: string;
  readonly range: DeletionVectorRange;
}

/**
 * Reads the vectors of several data files with one ranged read per DV index file (the span from
 * the first to the last wanted vector), all files at once; returns data file name → vector.
 * A bucket's vectors share one index file, so reading them one by one would cost a round trip per
 * data file where this costs one per index file.
 */
export async function readDeletionVectorsAt(
  io: { readRange(path: string, offset: number, length: number): Promise<Uint8Array> },
  locations: Iterable<DeletionVectorLocation>,
): Promise<Map<string, DeletionVector>> {
  const byPath = new Map<string, DeletionVectorRange[]>();
  for (const { path, range } of locations) {
    const list = byPath.get(path);
    if (list === undefined) byPath.set(path, [range]);
    else list.push(range);
  }
  const out = new Map<string, DeletionVector>();
  await Promise.all(
    [...byPath].map(async ([path, ranges]) => {
      // A vector is framed by its int32 size and int32 CRC around `length` bytes.
      const start = Math.min(...ranges.map((r) => r.offset));
      const end = Math.max(...ranges.map((r) => r.offset + 4 + r.length + 4));
      const bytes = await io.readRange(path, start, end - start);
      for (const r of ranges) {
        if (r.offset + 8 + r.length - start > bytes.length) {
          throw new CorruptFileError(
            path,
            `deletion vector range of '${r.dataFileName}' (offset ${r.offset}, length ${r.length}) lies outside the file`,
          );
        }
        const at = r.offset - start;
        out.set(
          r.dataFileName,
          decodeDeletionVector(bytes.subarray(at, at + 8 + r.length), path, {
            length: r.length,
            cardinality: r.cardinality,
            dataFileName: r.dataFileName,
          }),
        );
      }
    }),
  );
  return out;
}

/** Largest row position a 32-bit deletion vector holds (Java `RoaringBitmap32.MAX_VALUE`). */
export const DV_MAX_POSITION_BITMAP32 = 2147483647;

/**
 * A deletion vector that grows (Java's `BitmapDeletionVector` / `Bitmap64DeletionVector`): writers
 * add deleted positions, and {@link serialize} frames it exactly as Java does.
 */
export class MutableDeletionVector implements DeletionVector {
  /** Low 32-bit halves per high 32-bit key (only key 0 unless `bitmap64`). */
  private readonly parts = new Map<number, MutableRoaringBitmap32>();
  private count = 0;

  /** `bitmap64`: the 64-bit (Iceberg-compatible) layout of `deletion-vectors.bitmap64`. */
  constructor(readonly bitmap64 = false) {}

  /** A mutable copy of `dv` (for example one read from an index file) in the given layout. */
  static copyOf(dv: DeletionVector, bitmap64 = false): MutableDeletionVector {
    const out = new MutableDeletionVector(bitmap64);
    for (const p of dv.positions()) out.delete(p);
    return out;
  }

  get cardinality(): number {
    return this.count;
  }

  /**
   * Marks row `pos` deleted; false when it already was (Java `checkedDelete`).
   *
   * @throws RangeError for a negative position, or one above 2^31 - 1 in the 32-bit layout (Java
   *   refuses such files too).
   */
  delete(pos: number | bigint): boolean {
    const p = Number(pos);
    if (!Number.isSafeInteger(p) || p < 0) throw new RangeError(`row position ${String(pos)} is not a non-negative integer`);
    if (!this.bitmap64 && p > DV_MAX_POSITION_BITMAP32) {
      throw new RangeError(
        `row position ${p} exceeds ${DV_MAX_POSITION_BITMAP32}, the limit of 32-bit deletion vectors; set 'deletion-vectors.bitmap64' = 'true'`,
      );
    }
    const high = Math.floor(p / 2 ** 32);
    let part = this.parts.get(high);
    if (part === undefined) {
      part = new MutableRoaringBitmap32();
      this.parts.set(high, part);
    }
    const added = part.add(p - high * 2 ** 32);
    if (added) this.count++;
    return added;
  }

  /** Adds every position of `other`. */
  merge(other: DeletionVector): void {
    for (const p of other.positions()) this.delete(p);
  }

  isDeleted(pos: number | bigint): boolean {
    const p = Number(pos);
    const high = Math.floor(p / 2 ** 32);
    return this.parts.get(high)?.contains(p - high * 2 ** 32) ?? false;
  }

  *positions(): IterableIterator<number> {
    for (const high of [...this.parts.keys()].sort((a, b) => a - b)) {
      for (const low of this.parts.get(high)!.values()) yield high * 2 ** 32 + low;
    }
  }

  /** Magic plus bitmap: the bytes the CRC covers and the range's length counts. */
  private body(): Uint8Array {
    if (!this.bitmap64) {
      const bitmap = (this.parts.get(0) ?? new MutableRoaringBitmap32()).serialize();
      const out = new Uint8Array(4 + bitmap.length);
      new DataView(out.buffer).setInt32(0, DV_MAGIC_BITMAP32, false);
      out.set(bitmap, 4);
      return out;
    }
    // Java keeps one bitmap per key from 0 to the highest key used, empty ones included.
    const highest = this.parts.size === 0 ? -1 : Math.max(...this.parts.keys());
    const chunks: Uint8Array[] = [];
    const head = new Uint8Array(12);
    const hv = new DataView(head.buffer);
    hv.setInt32(0, DV_MAGIC_BITMAP64, true);
    hv.setBigUint64(4, BigInt(highest + 1), true);
    chunks.push(head);
    for (let key = 0; key <= highest; key++) {
      const k = new Uint8Array(4);
      new DataView(k.buffer).setUint32(0, key, true);
      chunks.push(k, (this.parts.get(key) ?? new MutableRoaringBitmap32()).serialize());
    }
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }

  /** The framed vector: int32 BE size, magic + bitmap, int32 BE CRC32 (Java `serializeTo`). */
  serialize(): Uint8Array {
    const body = this.body();
    const out = new Uint8Array(4 + body.length + 4);
    const view = new DataView(out.buffer);
    view.setInt32(0, body.length, false);
    out.set(body, 4);
    view.setUint32(4 + body.length, zlib.crc32(body) >>> 0, false);
    return out;
  }
}

/** A DV index file's bytes and the range of each vector in it. */
export interface EncodedDeletionVectorFile {
  readonly bytes: Uint8Array;
  readonly ranges: DeletionVectorRange[];
}

/**
 * Encodes a DV index file holding `vectors` (data file name → vector) in iteration order, as
 * Java's `DeletionFileWriter` writes it. Vectors that are not {@link MutableDeletionVector}s are
 * written in the 32-bit layout unless `bitmap64`.
 */
export function encodeDeletionVectorFile(
  vectors: Iterable<readonly [string, DeletionVector]>,
  bitmap64 = false,
): EncodedDeletionVectorFile {
  const chunks: Uint8Array[] = [Uint8Array.of(DELETION_VECTOR_FILE_VERSION)];
  const ranges: DeletionVectorRange[] = [];
  let offset = 1;
  for (const [dataFileName, dv] of vectors) {
    const m = dv instanceof MutableDeletionVector && dv.bitmap64 === bitmap64 ? dv : MutableDeletionVector.copyOf(dv, bitmap64);
    const framed = m.serialize();
    ranges.push({ dataFileName, offset, length: framed.length - 8, cardinality: m.cardinality });
    chunks.push(framed);
    offset += framed.length;
  }
  const bytes = new Uint8Array(offset);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, ranges };
}
