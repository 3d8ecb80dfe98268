/**
 * Paimon's `FastHash`: the 64-bit hash its bloom-filter file index takes of a column value, by
 * type. Strings (UTF-8) and bytes: XXH64; integer-like types, dates, times, floats (their IEEE
 * bits, NaN canonical) and timestamps (millis for precision ≤ 3, else micros): Thomas Wang's
 * 64-bit integer hash of the value widened to a Java `long`. BOOLEAN, DECIMAL and nested types
 * have no hash in Paimon, so they cannot carry a bloom filter.
 */
import type { DataType } from '../types.js';
import { isTimestamp } from '../values.js';
import { xxHash64 } from './xxhash64.js';

/**
 * Hashes one non-null value of a column; returns null when the value does not have the column's
 * value shape (a caller that cannot hash a literal must not skip anything by it).
 */
export type FastHash = (value: unknown) => bigint | null;

const utf8 = new TextEncoder();
/** UTF-8 of the string being hashed (reused: a writer hashes every value of a column). */
let scratch = new Uint8Array(256);

function hashString(s: string): bigint {
  if (s.length * 3 > scratch.length) scratch = new Uint8Array(s.length * 3);
  return xxHash64(scratch, utf8.encodeInto(s, scratch).written);
}
const f32 = new Float32Array(1);
const f32Bits = new Int32Array(f32.buffer);
const f64 = new Float64Array(1);
const f64Bits = new BigInt64Array(f64.buffer);

/** Thomas Wang's 64-bit integer hash, in Java's signed `long` arithmetic. */
export function longHash(value: bigint): bigint {
  let key = BigInt.asIntN(64, value);
  key = BigInt.asIntN(64, ~key + (key << 21n));
  key ^= key >> 24n;
  key = BigInt.asIntN(64, key + (key << 3n) + (key << 8n));
  key ^= key >> 14n;
  key = BigInt.asIntN(64, key + (key << 2n) + (key << 4n));
  key ^= key >> 28n;
  return BigInt.asIntN(64, key + (key << 31n));
}

function integral(value: unknown): bigint | null {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return null;
}

/** Java's `Float.floatToIntBits` (NaN canonical), sign-extended to a long. */
function floatBits(value: number): bigint {
  if (Number.isNaN(value)) return 0x7fc0_0000n;
  f32[0] = value;
  return BigInt(f32Bits[0]!);
}

/** Java's `Double.doubleToLongBits` (NaN canonical). */
function doubleBits(value: number): bigint {
  if (Number.isNaN(value)) return 0x7ff8_0000_0000_0000n;
  f64[0] = value;
  return f64Bits[0]!;
}

/** The hash of `type`'s values, or null when Paimon's bloom filter does not support the type. */
export function fastHashOf(type: DataType): FastHash | null {
  switch (type.root) {
    case 'CHAR':
    case 'VARCHAR':
      return (v) => (typeof v === 'string' ? hashString(v) : null);
    case 'BINARY':
    case 'VARBINARY':
      return (v) => (v instanceof Uint8Array ? xxHash64(v) : null);
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
    case 'BIGINT':
      return (v) => {
        const n = integral(v);
        return n === null ? null : longHash(n);
      };
    case 'FLOAT':
      return (v) => (typeof v === 'number' ? longHash(floatBits(v)) : null);
    case 'DOUBLE':
      return (v) => (typeof v === 'number' ? longHash(doubleBits(v)) : null);
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const millisOnly = type.precision <= 3;
      return (v) => {
        if (!isTimestamp(v)) return null;
        const millis = BigInt(v.millis);
        return longHash(millisOnly ? millis : millis * 1000n + BigInt(Math.floor(v.nanoOfMillis / 1000)));
      };
    }
    default:
      return null;
  }
}
