/**
 * Deletion-vector index files (`index/index-*`, index type `DELETION_VECTORS`): per data file, the
 * set of deleted row positions.
 *
 * File layout: byte 0 = version 1; then for each data file, at the offset its
 * {@link DeletionVectorRange} names: int32 BE `size`, `size` bytes (int32 magic + bitmap), int32 BE
 * CRC32 of those `size` bytes. Magic 1581511376 (big-endian) announces a 32-bit portable
 * RoaringBitmap; 1681511377 (little-endian, Iceberg-compatible, `deletion-vectors.bitmap64`) a
 * 64-bit portable bitmap.
 */
import zlib from 'node:zlib';
import { CorruptFileError } from './errors.js';
import type { DeletionVectorRange } from './index-manifest.js';
import type { ManifestIO } from './manifest-fields.js';
import { RoaringBitmap32, RoaringBitmap64 } from './roaring.js';

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
