/**
 * Paimon's BinaryRow: the byte layout of partition values, min/max keys, stats rows and bucket-key
 * rows in manifests. Java compares and hashes these rows by bytes, so encoding must be exact.
 *
 * Layout: header (row kind byte + null bitset, 8-byte words), one 8-byte little-endian slot per
 * field, then a variable part of 8-byte aligned chunks. See the format spec §5.
 */
import { FormatError, SchemaError } from './errors.js';
import { typeToString } from './type-json.js';
import type { DataType } from './types.js';
import { isDecimal, isTimestamp, type Decimal, type Timestamp, type Value } from './values.js';

/** Java's `Float.NaN` (`floatToIntBits`), the one NaN a BinaryRow holds here. */
const JAVA_FLOAT_NAN_BITS = 0x7fc00000;
/** The high word of Java's `Double.NaN` (`doubleToLongBits`: 0x7ff8000000000000). */
const JAVA_DOUBLE_NAN_HIGH_BITS = 0x7ff80000;

/** Bytes of header + null bitset for a row of `arity` fields. */
export function nullBitsSizeInBytes(arity: number): number {
  return Math.floor((arity + 63 + 8) / 64) * 8;
}

/** Largest DECIMAL precision stored inline as a long. */
const MAX_COMPACT_DECIMAL_PRECISION = 18;
/** Largest TIMESTAMP precision stored inline as epoch millis. */
const MAX_COMPACT_TIMESTAMP_PRECISION = 3;
/** Strings/binaries up to this length live inside the 8-byte slot. */
const MAX_FIX_PART_DATA_SIZE = 7;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/**
 * Encodes values as a BinaryRow (no arity prefix). `values[i]` must follow the representation in
 * `values.ts` for `types[i]`; `null` marks a null field.
 *
 * @param rowKind row kind byte (0 = +I, always 0 for partitions, keys and stats).
 * @throws SchemaError for unsupported (nested) types; FormatError for values that do not fit.
 */
export function encodeBinaryRow(types: readonly DataType[], values: readonly Value[], rowKind = 0): Uint8Array {
  if (types.length !== values.length) {
    throw new FormatError(`BinaryRow: ${types.length} types but ${values.length} values`);
  }
  const arity = types.length;
  const fixedSize = nullBitsSizeInBytes(arity) + 8 * arity;
  const chunks: Uint8Array[] = [];
  let cursor = fixedSize;
  const fixed = new Uint8Array(fixedSize);
  const view = new DataView(fixed.buffer);
  fixed[0] = rowKind;

  const appendVar = (bytes: Uint8Array, reserve: number): number => {
    const offset = cursor;
    const chunk = new Uint8Array(reserve);
    chunk.set(bytes);
    chunks.push(chunk);
    cursor += reserve;
    return offset;
  };
  const setOffsetAndSize = (slot: number, offset: number, size: number): void => {
    view.setUint32(slot, size, true);
    view.setUint32(slot + 4, offset, true);
  };

  for (let i = 0; i < arity; i++) {
    const type = types[i] as DataType;
    const v = values[i] ?? null;
    const slot = nullBitsSizeInBytes(arity) + 8 * i;
    const fail = (): never => {
      throw new FormatError(`BinaryRow field ${i}: value ${describe(v)} does not match type ${typeToString(type)}`);
    };
    if (v === null) {
      fixed[1 + (i >> 3)]! |= 1 << (i & 7);
      // Java still reserves the variable-part space of non-compact decimals and timestamps.
      if (type.root === 'DECIMAL' && type.precision > MAX_COMPACT_DECIMAL_PRECISION) {
        setOffsetAndSize(slot, appendVar(new Uint8Array(0), 16), 0);
      } else if ((type.root === 'TIMESTAMP' || type.root === 'TIMESTAMP_LTZ') && type.precision > MAX_COMPACT_TIMESTAMP_PRECISION) {
        setOffsetAndSize(slot, appendVar(new Uint8Array(0), 8), 0);
      }
      continue;
    }
    switch (type.root) {
      case 'BOOLEAN':
        if (typeof v !== 'boolean') fail();
        fixed[slot] = v ? 1 : 0;
        break;
      case 'TINYINT':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -128 || v > 127) fail();
        view.setInt8(slot, v as number);
        break;
      case 'SMALLINT':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -32768 || v > 32767) fail();
        view.setInt16(slot, v as number, true);
        break;
      case 'INT':
      case 'DATE':
      case 'TIME':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) fail();
        view.setInt32(slot, v as number, true);
        break;
      case 'BIGINT':
        if (typeof v !== 'bigint' || BigInt.asIntN(64, v) !== v) fail();
        view.setBigInt64(slot, v as bigint, true);
        break;
      case 'FLOAT':
        if (typeof v !== 'number') fail();
        // A float's bits go in as they are (Java's putFloat), -0.0 included; every NaN as Java's
        // Float.NaN, so that all NaNs are one key to the bucket hash, as to the key order.
        if (Number.isNaN(v)) view.setUint32(slot, JAVA_FLOAT_NAN_BITS, true);
        else view.setFloat32(slot, v as number, true);
        break;
      case 'DOUBLE':
        if (typeof v !== 'number') fail();
        if (Number.isNaN(v)) {
          view.setUint32(slot, 0, true);
          view.setUint32(slot + 4, JAVA_DOUBLE_NAN_HIGH_BITS, true);
        } else view.setFloat64(slot, v as number, true);
        break;
      case 'DECIMAL': {
        if (!isDecimal(v)) return fail();
        const unscaled = rescale(v, type.scale, i);
        if (type.precision <= MAX_COMPACT_DECIMAL_PRECISION) {
          if (BigInt.asIntN(64, unscaled) !== unscaled) fail();
          view.setBigInt64(slot, unscaled, true);
        } else {
          const bytes = bigIntToBytes(unscaled);
          if (bytes.length > 16) fail();
          setOffsetAndSize(slot, appendVar(bytes, 16), bytes.length);
        }
        break;
      }
      case 'TIMESTAMP':
      case 'TIMESTAMP_LTZ': {
        if (!isTimestamp(v) || !Number.isSafeInteger(v.millis)) return fail();
        if (type.precision <= MAX_COMPACT_TIMESTAMP_PRECISION) {
          view.setBigInt64(slot, BigInt(v.millis), true);
        } else {
          const millis = new Uint8Array(8);
          new DataView(millis.buffer).setBigInt64(0, BigInt(v.millis), true);
          setOffsetAndSize(slot, appendVar(millis, 8), v.nanoOfMillis);
        }
        break;
      }
      case 'CHAR':
      case 'VARCHAR':
      case 'BINARY':
      case 'VARBINARY': {
        const isString = type.root === 'CHAR' || type.root === 'VARCHAR';
        if (isString ? typeof v !== 'string' : !(v instanceof Uint8Array)) fail();
        const bytes = isString ? utf8Encoder.encode(v as string) : (v as Uint8Array);
        if (bytes.length <= MAX_FIX_PART_DATA_SIZE) {
          fixed.set(bytes, slot);
          fixed[slot + 7] = 0x80 | bytes.length;
        } else {
          setOffsetAndSize(slot, appendVar(bytes, roundToWord(bytes.length)), bytes.length);
        }
        break;
      }
      default:
        throw new SchemaError(`BinaryRow field ${i}: type ${typeToString(type)} is not supported in BinaryRow`);
    }
  }
  if (chunks.length === 0) return fixed;
  const out = new Uint8Array(cursor);
  out.set(fixed);
  let pos = fixedSize;
  for (const c of chunks) {
    out.set(c, pos);
    pos += c.length;
  }
  return out;
}

/**
 * Decodes a BinaryRow (no arity prefix) with the given field types.
 *
 * @throws FormatError when offsets point outside the row or a type is unsupported.
 */
export function decodeBinaryRow(row: Uint8Array, types: readonly DataType[]): Value[] {
  const arity = types.length;
  const bitsSize = nullBitsSizeInBytes(arity);
  if (row.length < bitsSize + 8 * arity) {
    throw new FormatError(`BinaryRow of ${row.length} bytes is too short for ${arity} fields`);
  }
  const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const out: Value[] = [];
  for (let i = 0; i < arity; i++) {
    const type = types[i] as DataType;
    const slot = bitsSize + 8 * i;
    if (((row[1 + (i >> 3)] ?? 0) & (1 << (i & 7))) !== 0) {
      out.push(null);
      continue;
    }
    const varPart = (): { offset: number; size: number } => {
      const size = view.getUint32(slot, true);
      const offset = view.getUint32(slot + 4, true);
      return { offset, size };
    };
    const slice = (offset: number, size: number): Uint8Array => {
      if (offset + size > row.length) {
        throw new FormatError(`BinaryRow field ${i}: variable data [${offset}, ${offset + size}) lies outside the ${row.length}-byte row`);
      }
      return row.subarray(offset, offset + size);
    };
    switch (type.root) {
      case 'BOOLEAN':
        out.push(row[slot] !== 0);
        break;
      case 'TINYINT':
        out.push(view.getInt8(slot));
        break;
      case 'SMALLINT':
        out.push(view.getInt16(slot, true));
        break;
      case 'INT':
      case 'DATE':
      case 'TIME':
        out.push(view.getInt32(slot, true));
        break;
      case 'BIGINT':
        out.push(view.getBigInt64(slot, true));
        break;
      case 'FLOAT':
        out.push(view.getFloat32(slot, true));
        break;
      case 'DOUBLE':
        out.push(view.getFloat64(slot, true));
        break;
      case 'DECIMAL': {
        if (type.precision <= MAX_COMPACT_DECIMAL_PRECISION) {
          out.push({ unscaled: view.getBigInt64(slot, true), scale: type.scale } satisfies Decimal);
        } else {
          const { offset, size } = varPart();
          out.push({ unscaled: bytesToBigInt(slice(offset, size)), scale: type.scale } satisfies Decimal);
        }
        break;
      }
      case 'TIMESTAMP':
      case 'TIMESTAMP_LTZ': {
        if (type.precision <= MAX_COMPACT_TIMESTAMP_PRECISION) {
          out.push({ millis: Number(view.getBigInt64(slot, true)), nanoOfMillis: 0 } satisfies Timestamp);
        } else {
          const { offset, size: nanoOfMillis } = varPart();
          slice(offset, 8);
          out.push({ millis: Number(view.getBigInt64(offset, true)), nanoOfMillis } satisfies Timestamp);
        }
        break;
      }
      case 'CHAR':
      case 'VARCHAR':
      case 'BINARY':
      case 'VARBINARY': {
        const mark = row[slot + 7] ?? 0;
        let bytes: Uint8Array;
        if ((mark & 0x80) !== 0) {
          bytes = row.subarray(slot, slot + (mark & 0x7f));
        } else {
          const { offset, size } = varPart();
          bytes = slice(offset, size);
        }
        out.push(type.root === 'CHAR' || type.root === 'VARCHAR' ? utf8Decoder.decode(bytes) : bytes.slice());
        break;
      }
      default:
        throw new SchemaError(`BinaryRow field ${i}: type ${typeToString(type)} is not supported in BinaryRow`);
    }
  }
  return out;
}

/** Manifest form: 4-byte big-endian arity followed by the BinaryRow bytes. */
export function serializeBinaryRow(types: readonly DataType[], values: readonly Value[]): Uint8Array {
  const row = encodeBinaryRow(types, values);
  const out = new Uint8Array(4 + row.length);
  new DataView(out.buffer).setInt32(0, types.length, false);
  out.set(row, 4);
  return out;
}

/**
 * Decodes the manifest form (4-byte big-endian arity + BinaryRow).
 *
 * @throws FormatError when the stored arity differs from `types.length`.
 */
export function deserializeBinaryRow(bytes: Uint8Array, types: readonly DataType[]): Value[] {
  return decodeBinaryRow(binaryRowBody(bytes, types.length), types);
}

/**
 * The BinaryRow bytes inside the manifest form (no copy), checking the arity prefix. Useful for
 * hashing or byte-wise comparison without decoding.
 */
export function binaryRowBody(bytes: Uint8Array, expectedArity?: number): Uint8Array {
  if (bytes.length < 4) throw new FormatError(`serialized BinaryRow of ${bytes.length} bytes lacks the arity prefix`);
  const arity = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(0, false);
  if (expectedArity !== undefined && arity !== expectedArity) {
    throw new FormatError(`serialized BinaryRow has arity ${arity}, expected ${expectedArity}`);
  }
  return bytes.subarray(4);
}

function roundToWord(n: number): number {
  return (n + 7) & ~7;
}

/** Unscaled value at the column's scale; refuses to drop non-zero digits. */
function rescale(d: Decimal, scale: number, field: number): bigint {
  if (d.scale === scale) return d.unscaled;
  if (d.scale < scale) return d.unscaled * 10n ** BigInt(scale - d.scale);
  const f = 10n ** BigInt(d.scale - scale);
  if (d.unscaled % f !== 0n) {
    throw new FormatError(`BinaryRow field ${field}: decimal with scale ${d.scale} does not fit scale ${scale} exactly`);
  }
  return d.unscaled / f;
}

/** Java `BigInteger.toByteArray()`: minimal two's-complement big-endian bytes (at least one). */
export function bigIntToBytes(v: bigint): Uint8Array {
  let len = 1;
  while (BigInt.asIntN(len * 8, v) !== v) len++;
  const out = new Uint8Array(len);
  let x = BigInt.asUintN(len * 8, v);
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** Inverse of {@link bigIntToBytes}. */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let x = 0n;
  for (const b of bytes) x = (x << 8n) | BigInt(b);
  return BigInt.asIntN(bytes.length * 8, x);
}

function describe(v: Value): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  if (typeof v === 'object' && v !== null) return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  return JSON.stringify(v);
}
