/**
 * XXH64 with seed 0: the hash Paimon's bloom filter uses for strings and bytes (Java's
 * `LongHashFunction.xx()` of zero-allocation-hashing), as a signed 64-bit value like Java's `long`.
 */
const MASK = 0xffff_ffff_ffff_ffffn;
const P1 = 0x9e37_79b1_85eb_ca87n;
const P2 = 0xc2b2_ae3d_27d4_eb4fn;
const P3 = 0x1656_67b1_9e37_79f9n;
const P4 = 0x85eb_ca77_c2b2_ae63n;
const P5 = 0x27d4_eb2f_1656_67c5n;

function rotl(x: bigint, r: bigint): bigint {
  return ((x << r) | (x >> (64n - r))) & MASK;
}

function round(acc: bigint, input: bigint): bigint {
  return (rotl((acc + input * P2) & MASK, 31n) * P1) & MASK;
}

function mergeRound(acc: bigint, value: bigint): bigint {
  return ((acc ^ round(0n, value)) * P1 + P4) & MASK;
}

/** XXH64(`data`, seed 0) as a signed 64-bit bigint. */
export function xxHash64(data: Uint8Array): bigint {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const len = data.length;
  const u64 = (at: number): bigint => view.getBigUint64(at, true);
  let at = 0;
  let h: bigint;
  if (len >= 32) {
    let v1 = (P1 + P2) & MASK;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (0n - P1) & MASK;
    for (; at + 32 <= len; at += 32) {
      v1 = round(v1, u64(at));
      v2 = round(v2, u64(at + 8));
      v3 = round(v3, u64(at + 16));
      v4 = round(v4, u64(at + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & MASK;
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = P5;
  }
  h = (h + BigInt(len)) & MASK;
  for (; at + 8 <= len; at += 8) {
    h ^= round(0n, u64(at));
    h = (rotl(h, 27n) * P1 + P4) & MASK;
  }
  if (at + 4 <= len) {
    h ^= (BigInt(view.getUint32(at, true)) * P1) & MASK;
    h = (rotl(h, 23n) * P2 + P3) & MASK;
    at += 4;
  }
  for (; at < len; at++) {
    h ^= (BigInt(data[at]!) * P5) & MASK;
    h = (rotl(h, 11n) * P1) & MASK;
  }
  h ^= h >> 33n;
  h = (h * P2) & MASK;
  h ^= h >> 29n;
  h = (h * P3) & MASK;
  h ^= h >> 32n;
  return BigInt.asIntN(64, h);
}
