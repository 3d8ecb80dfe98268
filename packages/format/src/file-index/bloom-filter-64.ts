/**
 * Paimon's `BloomFilter64`: a bit set sized from the expected items and false-positive
 * probability, probed at `numHashFunctions` positions derived from the two 32-bit halves of a
 * 64-bit hash (Kirsch–Mitzenmacher double hashing, negative combinations bit-flipped, modulo the
 * bit count). Java keeps the bits in `long`s serialized little-endian, which is the same as a byte
 * array with bit `p` at byte `p >>> 3`, bit `p & 7`: that is how the bits are held here.
 */

/** Bit count and hash-function count of a filter for `items` values at false-positive rate `fpp`. */
export function bloomFilterSize(items: number, fpp: number): { readonly numBits: number; readonly numHashFunctions: number } {
  // Java: (int) (-items * Math.log(fpp) / (Math.log(2) * Math.log(2))), then rounded up to whole
  // longs (always adding at least one bit, even at a multiple of 64).
  const raw = (-items * Math.log(fpp)) / (Math.log(2) * Math.log(2));
  const nb = Math.min(2147483647, Math.trunc(raw));
  const numBits = nb + (64 - (nb % 64));
  const numHashFunctions = Math.max(1, Math.floor((numBits / items) * Math.log(2) + 0.5));
  return { numBits, numHashFunctions };
}

/** A 64-bit-hash bloom filter over a little-endian bit array. */
export class BloomFilter64 {
  /** Number of bits (a multiple of 64). */
  readonly numBits: number;

  /**
   * @param numHashFunctions probes per value
   * @param bits the bit set, `numBits / 8` bytes (kept, not copied)
   */
  constructor(
    readonly numHashFunctions: number,
    readonly bits: Uint8Array,
  ) {
    this.numBits = bits.length * 8;
  }

  /** An empty filter sized by {@link bloomFilterSize}. */
  static forItems(items: number, fpp: number): BloomFilter64 {
    const { numBits, numHashFunctions } = bloomFilterSize(items, fpp);
    return new BloomFilter64(numHashFunctions, new Uint8Array(numBits / 8));
  }

  /** Sets the bits of a value's 64-bit hash. */
  addHash(hash64: bigint): void {
    const lo = Number(BigInt.asIntN(32, hash64));
    const hi = Number(BigInt.asIntN(32, hash64 >> 32n));
    const bits = this.bits;
    for (let i = 1; i <= this.numHashFunctions; i++) {
      const pos = position(lo, hi, i, this.numBits);
      bits[pos >>> 3]! |= 1 << (pos & 7);
    }
  }

  /** False when the value of this hash was certainly never added. */
  testHash(hash64: bigint): boolean {
    const lo = Number(BigInt.asIntN(32, hash64));
    const hi = Number(BigInt.asIntN(32, hash64 >> 32n));
    const bits = this.bits;
    for (let i = 1; i <= this.numHashFunctions; i++) {
      const pos = position(lo, hi, i, this.numBits);
      if ((bits[pos >>> 3]! & (1 << (pos & 7))) === 0) return false;
    }
    return true;
  }
}

/** Java: `int c = hash1 + i * hash2; if (c < 0) c = ~c; c % numBits` in 32-bit int arithmetic. */
function position(lo: number, hi: number, i: number, numBits: number): number {
  let combined = (lo + Math.imul(i, hi)) | 0;
  if (combined < 0) combined = ~combined;
  return combined % numBits;
}
