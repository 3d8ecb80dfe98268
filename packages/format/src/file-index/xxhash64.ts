/**
 * XXH64 with seed 0: the hash Paimon's bloom filter uses for strings and bytes (Java's
 * `LongHashFunction.xx()` of zero-allocation-hashing), as a signed 64-bit value like Java's `long`.
 *
 * The 64-bit lanes are kept as two unsigned 32-bit halves in plain numbers (a BigInt per step
 * costs about ten times more, and writers hash every value of an indexed column).
 */

// Primes as [high, low] halves.
const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;

/** Result registers of the 64-bit helpers (one hash runs at a time: no allocation per step). */
let rh = 0;
let rl = 0;

/** (ah:al) × (bh:bl) mod 2^64 into rh:rl. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const lo = a0 * b0;
  const m1 = a1 * b0;
  const m2 = a0 * b1;
  const t = (lo >>> 16) + (m1 & 0xffff) + (m2 & 0xffff);
  rl = (((t & 0xffff) << 16) | (lo & 0xffff)) >>> 0;
  const carry = (t >>> 16) + (m1 >>> 16) + (m2 >>> 16) + a1 * b1;
  rh = (carry + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** (ah:al) + (bh:bl) mod 2^64 into rh:rl. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  rl = lo >>> 0;
  rh = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** rotl(h:l, r) for 0 < r < 32 into rh:rl. */
function rotl(h: number, l: number, r: number): void {
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** XXH64's round(acc, input) into rh:rl: rotl(acc + input × P2, 31) × P1. */
function round(accH: number, accL: number, inH: number, inL: number): void {
  mul(inH, inL, P2H, P2L);
  add(accH, accL, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

/** XXH64's mergeRound(acc, v) into rh:rl: (acc ^ round(0, v)) × P1 + P4. */
function mergeRound(accH: number, accL: number, vH: number, vL: number): void {
  round(0, 0, vH, vL);
  mul((accH ^ rh) >>> 0, (accL ^ rl) >>> 0, P1H, P1L);
  add(rh, rl, P4H, P4L);
}

function u32(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
}

/** XXH64 of `data.subarray(0, length)` (seed 0) as a signed 64-bit bigint. */
export function xxHash64(data: Uint8Array, length: number = data.length): bigint {
  let at = 0;
  let hH: number;
  let hL: number;
  if (length >= 32) {
    add(P1H, P1L, P2H, P2L);
    let v1H = rh;
    let v1L = rl;
    let v2H = P2H;
    let v2L = P2L;
    let v3H = 0;
    let v3L = 0;
    // 0 - P1
    add(~P1H >>> 0, ~P1L >>> 0, 0, 1);
    let v4H = rh;
    let v4L = rl;
    for (; at + 32 <= length; at += 32) {
      round(v1H, v1L, u32(data, at + 4), u32(data, at));
      v1H = rh;
      v1L = rl;
      round(v2H, v2L, u32(data, at + 12), u32(data, at + 8));
      v2H = rh;
      v2L = rl;
      round(v3H, v3L, u32(data, at + 20), u32(data, at + 16));
      v3H = rh;
      v3L = rl;
      round(v4H, v4L, u32(data, at + 28), u32(data, at + 24));
      v4H = rh;
      v4L = rl;
    }
    rotl(v1H, v1L, 1);
    let sH = rh;
    let sL = rl;
    rotl(v2H, v2L, 7);
    add(sH, sL, rh, rl);
    sH = rh;
    sL = rl;
    rotl(v3H, v3L, 12);
    add(sH, sL, rh, rl);
    sH = rh;
    sL = rl;
    rotl(v4H, v4L, 18);
    add(sH, sL, rh, rl);
    mergeRound(rh, rl, v1H, v1L);
    mergeRound(rh, rl, v2H, v2L);
    mergeRound(rh, rl, v3H, v3L);
    mergeRound(rh, rl, v4H, v4L);
    hH = rh;
    hL = rl;
  } else {
    hH = P5H;
    hL = P5L;
  }
  // + length (< 2^32)
  add(hH, hL, 0, length);
  hH = rh;
  hL = rl;
  for (; at + 8 <= length; at += 8) {
    round(0, 0, u32(data, at + 4), u32(data, at));
    hH = (hH ^ rh) >>> 0;
    hL = (hL ^ rl) >>> 0;
    rotl(hH, hL, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hH = rh;
    hL = rl;
  }
  if (at + 4 <= length) {
    mul(0, u32(data, at), P1H, P1L);
    hH = (hH ^ rh) >>> 0;
    hL = (hL ^ rl) >>> 0;
    rotl(hH, hL, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hH = rh;
    hL = rl;
    at += 4;
  }
  for (; at < length; at++) {
    mul(0, data[at]!, P5H, P5L);
    hH = (hH ^ rh) >>> 0;
    hL = (hL ^ rl) >>> 0;
    rotl(hH, hL, 11);
    mul(rh, rl, P1H, P1L);
    hH = rh;
    hL = rl;
  }
  // Avalanche: h ^= h >>> 33; h *= P2; h ^= h >>> 29; h *= P3; h ^= h >>> 32.
  hL = (hL ^ (hH >>> 1)) >>> 0;
  mul(hH, hL, P2H, P2L);
  hH = rh;
  hL = (rl ^ ((rl >>> 29) | (rh << 3))) >>> 0;
  hH = (hH ^ (hH >>> 29)) >>> 0;
  mul(hH, hL, P3H, P3L);
  hH = rh;
  hL = (rl ^ rh) >>> 0;
  return BigInt.asIntN(64, (BigInt(hH) << 32n) | BigInt(hL));
}
