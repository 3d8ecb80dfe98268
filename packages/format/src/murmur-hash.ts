/**
 * Paimon's MurmurHash3 (x86, 32-bit) variant, used for `BinaryRow.hashCode()` and therefore for
 * fixed-bucket assignment. Differs from the reference algorithm only in the tail: leftover bytes
 * are mixed one at a time as sign-extended bytes (irrelevant for BinaryRows, always 8-byte sized).
 */

/** Seed Paimon uses for row hashing. */
export const PAIMON_HASH_SEED = 42;

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** Hash of `bytes` as a signed 32-bit integer, equal to Java's `MurmurHashUtils.hashBytes`. */
export function murmurHash(bytes: Uint8Array, seed = PAIMON_HASH_SEED): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = bytes.length;
  const aligned = len - (len % 4);
  let h1 = seed | 0;
  for (let i = 0; i < aligned; i += 4) h1 = mixH1(h1, mixK1(view.getInt32(i, true)));
  for (let i = aligned; i < len; i++) h1 = mixH1(h1, mixK1(view.getInt8(i)));
  return fmix(h1, len);
}

function mixK1(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixH1(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
