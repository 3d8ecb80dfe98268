/**
 * The body of one column's `bloom-filter` index in a file index (Paimon's
 * `BloomFilterFileIndex`): the number of hash functions as a big-endian int, then the filter's
 * bits (see `bloom-filter-64.ts`). Values are hashed with Paimon's `FastHash` of the column type;
 * nulls are not added, and a null literal never rules a file out.
 */
import type { DataType } from '../types.js';
import { BloomFilter64 } from './bloom-filter-64.js';
import { fastHashOf, type FastHash } from './fast-hash.js';
import { xxHash64 } from './xxhash64.js';

/** Index type name of the bloom filter in the file-index header and in table options. */
export const BLOOM_FILTER_INDEX = 'bloom-filter';

/** Paimon's defaults of `file-index.bloom-filter.<column>.items` and `.fpp`. */
export const BLOOM_FILTER_DEFAULT_ITEMS = 1_000_000;
export const BLOOM_FILTER_DEFAULT_FPP = 0.1;

/** Whether Paimon's bloom filter can index a column of `type`. */
export function bloomFilterSupports(type: DataType): boolean {
  return fastHashOf(type) !== null;
}

/** Collects a column's values into a bloom filter and serializes it. */
export class BloomFilterIndexWriter {
  private readonly filter: BloomFilter64;
  private readonly hash: FastHash;

  /**
   * @throws RangeError for a type Paimon's bloom filter does not support, `items` ≤ 0, or `fpp`
   *   outside (0, 1)
   */
  constructor(type: DataType, items: number = BLOOM_FILTER_DEFAULT_ITEMS, fpp: number = BLOOM_FILTER_DEFAULT_FPP) {
    const hash = fastHashOf(type);
    if (hash === null) throw new RangeError(`the bloom-filter file index does not support type ${type.root}`);
    if (!(fpp > 0 && fpp < 1)) throw new RangeError(`bloom filter 'fpp' must be in range (0, 1), but was ${fpp}`);
    if (!(Number.isInteger(items) && items > 0)) throw new RangeError(`bloom filter 'items' must be positive, but was ${items}`);
    this.hash = hash;
    this.filter = BloomFilter64.forItems(items, fpp);
  }

  /** Adds a value (nulls are skipped). */
  add(value: unknown): void {
    if (value === null || value === undefined) return;
    const h = this.hash(value);
    if (h === null) throw new TypeError(`value ${String(value)} does not fit the bloom filter's column type`);
    this.filter.addHash(h);
  }

  /**
   * Adds the value whose UTF-8 (strings) or bytes (binary) are `bytes`: the same as {@link add} of
   * the decoded value, without decoding it (a writer hashes its column buffers in place).
   */
  addBytes(bytes: Uint8Array): void {
    this.filter.addHash(xxHash64(bytes));
  }

  /** Big-endian hash-function count, then the bits. */
  serialize(): Uint8Array {
    const out = new Uint8Array(4 + this.filter.bits.length);
    new DataView(out.buffer).setInt32(0, this.filter.numHashFunctions, false);
    out.set(this.filter.bits, 4);
    return out;
  }
}

/** A deserialized bloom-filter index of one column. */
export class BloomFilterIndexReader {
  private readonly filter: BloomFilter64;
  private readonly hash: FastHash | null;

  /** @param body the index body; it must hold 4 bytes and then whole 64-bit words */
  constructor(type: DataType, body: Uint8Array) {
    if (body.length < 12 || (body.length - 4) % 8 !== 0) {
      throw new RangeError(`a bloom-filter index body of ${body.length} bytes is not 4 bytes plus whole 64-bit words`);
    }
    const numHashFunctions = new DataView(body.buffer, body.byteOffset, 4).getInt32(0, false);
    this.filter = new BloomFilter64(numHashFunctions, body.subarray(4));
    this.hash = fastHashOf(type);
  }

  /**
   * False only when no row of the file can equal `value`. Nulls, values that do not fit the type,
   * and types without a hash answer true. Float zeros are probed as both +0 and -0 (SQL equality
   * does not tell them apart; their bits differ).
   */
  mightContain(value: unknown): boolean {
    if (value === null || value === undefined || this.hash === null) return true;
    if (value === 0 && typeof value === 'number') return this.probe(0) || this.probe(-0);
    return this.probe(value);
  }

  private probe(value: unknown): boolean {
    const h = this.hash!(value);
    return h === null || this.filter.testHash(h);
  }
}
