/**
 * Integer run-length encodings: version 1 (runs with a byte delta, or varint literals) and
 * version 2 (short repeat, direct bit-packing, patched base and delta runs).
 *
 * A run is decoded into numbers when every value is a safe integer (all int, date and length
 * streams, and most longs) and into bigints otherwise, so the common paths stay free of bigint
 * arithmetic while 64-bit values stay exact. Callers take values as numbers (`readNumbers`) or as
 * int64 (`readBigInts`).
 */
import { ByteCursor, toNumberIfSafe } from './byte-cursor.js';
import { OrcDecodeError } from './errors.js';

/** A decoder of a stream of integers. */
export interface IntDecoder {
  /** Restarts at byte `offset` of the stream (a run header), then skips `values` values. */
  seek(offset: number, values: number): void;
  /** Reads `count` values as numbers; throws when a value is not a safe integer. */
  readNumbers(out: { [i: number]: number }, offset: number, count: number): void;
  /** Reads `count` values as int64. */
  readBigInts(out: BigInt64Array, offset: number, count: number): void;
  skip(count: number): void;
}

const MAX_RUN = 512;

/** Shared run buffer handling: each subclass decodes one run at a time into `nums` or `bigs`. */
abstract class RunDecoder implements IntDecoder {
  protected readonly nums = new Float64Array(MAX_RUN);
  protected readonly bigs = new BigInt64Array(MAX_RUN);
  protected isBig = false;
  protected runLength = 0;
  private runPos = 0;

  constructor(
    protected readonly cursor: ByteCursor,
    protected readonly signed: boolean,
  ) {}

  protected abstract fill(): void;

  seek(offset: number, values: number): void {
    this.cursor.pos = offset;
    this.runLength = 0;
    this.runPos = 0;
    this.skip(values);
  }

  private ensure(): void {
    if (this.runPos >= this.runLength) {
      this.runPos = 0;
      this.runLength = 0;
      this.isBig = false;
      this.fill();
      if (this.runLength === 0) throw new OrcDecodeError(`${this.cursor.name}: empty integer run`);
    }
  }

  readNumbers(out: { [i: number]: number }, offset: number, count: number): void {
    let i = 0;
    while (i < count) {
      this.ensure();
      const n = Math.min(count - i, this.runLength - this.runPos);
      if (this.isBig) {
        for (let k = 0; k < n; k++) {
          const v = toNumberIfSafe(this.bigs[this.runPos + k]!);
          if (typeof v === 'bigint') throw new OrcDecodeError(`${this.cursor.name}: value ${v} is too large for this column`);
          out[offset + i + k] = v;
        }
      } else if (ArrayBuffer.isView(out)) {
        // One bulk copy (with conversion) per run instead of a polymorphic element loop.
        (out as unknown as Float64Array).set(this.nums.subarray(this.runPos, this.runPos + n), offset + i);
      } else {
        for (let k = 0; k < n; k++) out[offset + i + k] = this.nums[this.runPos + k]!;
      }
      this.runPos += n;
      i += n;
    }
  }

  readBigInts(out: BigInt64Array, offset: number, count: number): void {
    let i = 0;
    while (i < count) {
      this.ensure();
      const n = Math.min(count - i, this.runLength - this.runPos);
      if (this.isBig) {
        for (let k = 0; k < n; k++) out[offset + i + k] = this.bigs[this.runPos + k]!;
      } else {
        for (let k = 0; k < n; k++) out[offset + i + k] = BigInt(this.nums[this.runPos + k]!);
      }
      this.runPos += n;
      i += n;
    }
  }

  skip(count: number): void {
    let i = 0;
    while (i < count) {
      this.ensure();
      const n = Math.min(count - i, this.runLength - this.runPos);
      this.runPos += n;
      i += n;
    }
  }

  /** Stores `values` (numbers or bigints) as the current run, as numbers when all are safe. */
  protected setRun(values: readonly (number | bigint)[]): void {
    const safe = values.every((v) => typeof v === 'number');
    this.isBig = !safe;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (safe) this.nums[i] = v as number;
      else this.bigs[i] = BigInt.asIntN(64, BigInt(v));
    }
    this.runLength = values.length;
  }

  protected readVar(): number | bigint {
    return this.signed ? this.cursor.varInt() : this.cursor.varUint();
  }
}

/** Version 1: a control byte, then either a run (length, delta byte, base) or literals. */
export class IntRleV1Decoder extends RunDecoder {
  protected fill(): void {
    const control = this.cursor.byte();
    if (control < 0x80) {
      const length = control + 3;
      const delta = (this.cursor.byte() << 24) >> 24;
      const base = this.readVar();
      const last = typeof base === 'number' ? base + delta * (length - 1) : 0;
      if (typeof base === 'number' && Number.isSafeInteger(last)) {
        for (let i = 0; i < length; i++) this.nums[i] = base + delta * i;
        this.runLength = length;
      } else {
        const b = BigInt(base);
        const values: bigint[] = [];
        for (let i = 0; i < length; i++) values.push(b + BigInt(delta * i));
        this.setRun(values.map(toNumberIfSafe));
      }
    } else {
      const length = 0x100 - control;
      const values: (number | bigint)[] = [];
      for (let i = 0; i < length; i++) values.push(this.readVar());
      this.setRun(values);
    }
  }
}

/** The 5-bit width codes of version 2. */
const WIDTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 32, 40, 48, 56, 64];

/** The smallest width of the code table that holds `n` bits (patch lists are packed at such a width). */
function closestFixedBits(n: number): number {
  if (n === 0) return 1;
  for (const w of WIDTHS) if (w >= n) return w;
  return 64;
}

/** Reads `count` big-endian bit-packed unsigned values of `width` bits; numbers for widths up to 48. */
function unpackNumbers(c: ByteCursor, width: number, count: number, out: Float64Array): void {
  const needed = Math.ceil((width * count) / 8);
  if (c.pos + needed > c.bytes.length) c.eof();
  const bytes = c.bytes;
  let pos = c.pos;
  c.pos += needed;
  if (width === 8) {
    for (let i = 0; i < count; i++) out[i] = bytes[pos++]!;
    return;
  }
  if (width === 16) {
    for (let i = 0; i < count; i++, pos += 2) out[i] = (bytes[pos]! << 8) | bytes[pos + 1]!;
    return;
  }
  if (width <= 24) {
    // A 32-bit window: at most width - 1 + 8 <= 31 bits are ever held.
    const mask = (1 << width) - 1;
    let window = 0;
    let bits = 0;
    for (let i = 0; i < count; i++) {
      while (bits < width) {
        window = ((window << 8) | bytes[pos++]!) >>> 0;
        bits += 8;
      }
      bits -= width;
      out[i] = (window >>> bits) & mask;
      window &= (1 << bits) - 1;
    }
    return;
  }
  let current = 0;
  let bitsLeft = 0;
  for (let i = 0; i < count; i++) {
    let result = 0;
    let need = width;
    while (need > bitsLeft) {
      result = result * 2 ** bitsLeft + (current & ((1 << bitsLeft) - 1));
      need -= bitsLeft;
      current = bytes[pos++]!;
      bitsLeft = 8;
    }
    if (need > 0) {
      bitsLeft -= need;
      result = result * 2 ** need + ((current >>> bitsLeft) & ((1 << need) - 1));
    }
    out[i] = result;
  }
}

function unpackBigInts(c: ByteCursor, width: number, count: number): bigint[] {
  const out: bigint[] = [];
  let current = 0;
  let bitsLeft = 0;
  for (let i = 0; i < count; i++) {
    let result = 0n;
    let need = width;
    while (need > bitsLeft) {
      result = (result << BigInt(bitsLeft)) | BigInt(current & ((1 << bitsLeft) - 1));
      need -= bitsLeft;
      current = c.byte();
      bitsLeft = 8;
    }
    if (need > 0) {
      bitsLeft -= need;
      result = (result << BigInt(need)) | BigInt((current >>> bitsLeft) & ((1 << need) - 1));
    }
    out.push(result);
  }
  return out;
}

const unzigzagNumber = (u: number): number => (u % 2 === 1 ? -(u + 1) / 2 : u / 2);
const unzigzagBig = (u: bigint): bigint => BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));

/** Version 2: the top two bits of each run's first byte select its sub-encoding. */
export class IntRleV2Decoder extends RunDecoder {
  private readonly scratch = new Float64Array(MAX_RUN);

  protected fill(): void {
    const first = this.cursor.byte();
    switch (first >>> 6) {
      case 0:
        return this.shortRepeat(first);
      case 1:
        return this.direct(first);
      case 2:
        return this.patchedBase(first);
      default:
        return this.delta(first);
    }
  }

  private shortRepeat(first: number): void {
    const size = ((first >>> 3) & 7) + 1;
    const length = (first & 7) + 3;
    let value: number | bigint;
    if (size <= 6) {
      const u = this.cursor.beNumber(size);
      value = this.signed ? unzigzagNumber(u) : u;
    } else {
      const u = this.cursor.beBig(size);
      value = toNumberIfSafe(this.signed ? unzigzagBig(u) : BigInt.asIntN(64, u));
    }
    if (typeof value === 'number') {
      this.nums.fill(value, 0, length);
      this.runLength = length;
    } else this.setRun(new Array<bigint>(length).fill(value));
  }

  private direct(first: number): void {
    const width = WIDTHS[(first >>> 1) & 0x1f]!;
    const length = (((first & 1) << 8) | this.cursor.byte()) + 1;
    if (width <= 48) {
      unpackNumbers(this.cursor, width, length, this.nums);
      if (this.signed) for (let i = 0; i < length; i++) this.nums[i] = unzigzagNumber(this.nums[i]!);
      this.runLength = length;
    } else {
      const raw = unpackBigInts(this.cursor, width, length);
      this.setRun(raw.map((u) => toNumberIfSafe(this.signed ? unzigzagBig(u) : BigInt.asIntN(64, u))));
    }
  }

  private patchedBase(first: number): void {
    const c = this.cursor;
    const width = WIDTHS[(first >>> 1) & 0x1f]!;
    const length = (((first & 1) << 8) | c.byte()) + 1;
    const third = c.byte();
    const baseWidth = ((third >>> 5) & 7) + 1;
    const patchWidth = WIDTHS[third & 0x1f]!;
    const fourth = c.byte();
    const gapWidth = ((fourth >>> 5) & 7) + 1;
    const patchCount = fourth & 0x1f;
    let base = c.beBig(baseWidth);
    const signBit = 1n << BigInt(baseWidth * 8 - 1);
    if ((base & signBit) !== 0n) base = -(base & ~signBit);
    const values = unpackBigInts(c, width, length);
    const patches = unpackBigInts(c, closestFixedBits(patchWidth + gapWidth), patchCount);
    if (patchWidth + gapWidth > 64)
      throw new OrcDecodeError(`${c.name}: patch width ${patchWidth} + gap width ${gapWidth} exceeds 64 bits`);
    const patchMask = (1n << BigInt(patchWidth)) - 1n;
    const pw = BigInt(patchWidth);
    let index = 0;
    for (let p = 0; p < patches.length; p++) {
      const gap = Number(patches[p]! >> pw);
      const patch = patches[p]! & patchMask;
      index += gap;
      // A gap of 255 with a zero patch only moves the position (gaps wider than the gap width).
      if (patch === 0n && gap === 255) continue;
      if (index >= length) throw new OrcDecodeError(`${c.name}: patch position ${index} is beyond the run of ${length} values`);
      values[index] = values[index]! | (patch << BigInt(width));
    }
    this.setRun(values.map((v) => toNumberIfSafe(BigInt.asIntN(64, base + v))));
  }

  private delta(first: number): void {
    const c = this.cursor;
    const code = (first >>> 1) & 0x1f;
    const width = code === 0 ? 0 : WIDTHS[code]!;
    const length = (((first & 1) << 8) | c.byte()) + 1;
    const firstValue = this.readVar();
    const deltaBase = c.varInt();
    if (typeof firstValue === 'number' && typeof deltaBase === 'number' && width <= 32) {
      const nums = this.nums;
      nums[0] = firstValue;
      let ok = true;
      if (width === 0) {
        for (let i = 1; i < length; i++) nums[i] = nums[i - 1]! + deltaBase;
        ok = Number.isSafeInteger(nums[length - 1]!);
      } else if (length > 1) {
        nums[1] = firstValue + deltaBase;
        const deltas = this.scratch;
        unpackNumbers(c, width, length - 2, deltas);
        const sign = deltaBase < 0 ? -1 : 1;
        for (let i = 2; i < length; i++) nums[i] = nums[i - 1]! + sign * deltas[i - 2]!;
        for (let i = 0; i < length && ok; i++) ok = Number.isSafeInteger(nums[i]!);
      }
      if (ok) {
        this.runLength = length;
        return;
      }
      // Left the safe range: redo the run exactly from the deltas already unpacked (width <= 32).
      this.bigRun(firstValue, deltaBase, width, length, Array.from(this.scratch.subarray(0, Math.max(0, length - 2)), BigInt));
      return;
    }
    this.bigRun(firstValue, deltaBase, width, length, width === 0 || length < 2 ? [] : unpackBigInts(c, width, length - 2));
  }

  private bigRun(firstValue: number | bigint, deltaBase: number | bigint, width: number, length: number, deltas: bigint[]): void {
    const values: bigint[] = [BigInt(firstValue)];
    const d = BigInt(deltaBase);
    if (width === 0) {
      for (let i = 1; i < length; i++) values.push(BigInt.asIntN(64, values[i - 1]! + d));
    } else if (length > 1) {
      values.push(BigInt.asIntN(64, values[0]! + d));
      for (let i = 2; i < length; i++) {
        values.push(BigInt.asIntN(64, d < 0n ? values[i - 1]! - deltas[i - 2]! : values[i - 1]! + deltas[i - 2]!));
      }
    }
    this.setRun(values.map(toNumberIfSafe));
  }
}

/** The decoder of an integer stream for a column encoding (v1 for DIRECT/DICTIONARY, v2 otherwise). */
export function intDecoder(cursor: ByteCursor, signed: boolean, v2: boolean): IntDecoder {
  return v2 ? new IntRleV2Decoder(cursor, signed) : new IntRleV1Decoder(cursor, signed);
}
