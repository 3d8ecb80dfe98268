/**
 * Sequential reads over one decompressed stream: bytes, base-128 varints (ORC's unsigned and
 * zigzag-signed integers) and big-endian fixed-width integers. Running past the end raises
 * {@link OrcDecodeError}, so a truncated or lying stream fails instead of reading zeros.
 */
import { OrcDecodeError } from './errors.js';

const TWO_32 = 2 ** 32;

export class ByteCursor {
  pos = 0;

  constructor(
    readonly bytes: Uint8Array,
    /** Stream name for messages (`column 3 DATA`). */
    readonly name: string,
  ) {}

  get atEnd(): boolean {
    return this.pos >= this.bytes.length;
  }

  eof(): never {
    throw new OrcDecodeError(`${this.name}: stream ends early (at byte ${this.pos} of ${this.bytes.length})`);
  }

  byte(): number {
    if (this.pos >= this.bytes.length) this.eof();
    return this.bytes[this.pos++]!;
  }

  /** Unsigned varint as a number when it is below 2^53, else as a bigint. */
  varUint(): number | bigint {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    // More than 49 bits: continue exactly in bigint.
    let big = BigInt(result);
    let shift = 49n;
    for (;;) {
      const b = this.byte();
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return big;
      shift += 7n;
      if (shift > 70n) throw new OrcDecodeError(`${this.name}: varint longer than 10 bytes at byte ${this.pos}`);
    }
  }

  /** Zigzag-encoded signed varint, as a number when safe, else bigint. */
  varInt(): number | bigint {
    const u = this.varUint();
    if (typeof u === 'number') return u % 2 === 1 ? -(u + 1) / 2 : u / 2;
    return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  }

  /** Unsigned varint of any length as a bigint (decimal digits have no 64-bit bound). */
  varUintUnbounded(): bigint {
    let big = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return big;
      shift += 7n;
      if (shift > 1024n) throw new OrcDecodeError(`${this.name}: unbounded varint longer than 1 KiB bits at byte ${this.pos}`);
    }
  }

  /** Big-endian unsigned integer of `n` bytes (1..8) as a bigint. */
  beBig(n: number): bigint {
    let v = 0n;
    for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(this.byte());
    return v;
  }

  /** Big-endian unsigned integer of `n` bytes (1..6) as a number. */
  beNumber(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + this.byte();
    return v;
  }

  take(n: number): Uint8Array {
    if (this.pos + n > this.bytes.length) this.eof();
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** A signed value held as number when it is a safe integer, else as bigint. */
export function toNumberIfSafe(v: bigint): number | bigint {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

export { TWO_32 };
