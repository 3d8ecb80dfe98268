/**
 * Where an ORC file's bytes come from. The reader asks only for byte ranges (the tail, then the
 * streams of the projected columns of each selected stripe), so an object store source fetches no
 * more than that; the interface is the same idea as hyparquet's `AsyncBuffer`.
 */

/** Random access to the bytes of one file. */
export interface OrcSource {
  /** Total size of the file in bytes. */
  readonly byteLength: number;
  /** Reads `length` bytes from `offset`; must return exactly that many bytes. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** An {@link OrcSource} over bytes already in memory. */
export function bytesSource(bytes: Uint8Array): OrcSource {
  return {
    byteLength: bytes.length,
    read: (offset, length) => Promise.resolve(bytes.subarray(offset, offset + length)),
  };
}
