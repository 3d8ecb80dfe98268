/**
 * Re-typing of Arrow data between the physical types a Parquet library returns and the shared
 * Paimon → Arrow mapping. Buffers are reused whenever only the type descriptor differs (timezone
 * spelling, map entries name, child names, field metadata); values are rewritten only when the
 * representation differs (integer width, timestamp unit).
 */
import * as arrow from 'apache-arrow';

import { FormatError } from './errors.js';

type IntArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

const NANOS_PER_UNIT: Record<arrow.TimeUnit, bigint> = {
  [arrow.TimeUnit.SECOND]: 1_000_000_000n,
  [arrow.TimeUnit.MILLISECOND]: 1_000_000n,
  [arrow.TimeUnit.MICROSECOND]: 1_000n,
  [arrow.TimeUnit.NANOSECOND]: 1n,
};

/**
 * Returns `data` typed as `target`. Throws {@link FormatError} naming `where` when the physical
 * representation cannot be converted without loss of meaning.
 */
export function castData(data: arrow.Data, target: arrow.DataType, where: string): arrow.Data {
  const source = data.type as arrow.DataType;
  if (arrow.DataType.isStruct(target) && arrow.DataType.isStruct(source)) {
    const fields = target.children;
    if (fields.length !== data.children.length) {
      throw new FormatError(`${where}: struct has ${data.children.length} fields, expected ${fields.length}`);
    }
    const children = fields.map((f, i) => castData(data.children[i]!, f.type, `${where}.${f.name}`));
    return data.clone(target, data.offset, data.length, data.nullCount, undefined, children);
  }
  if (arrow.DataType.isList(target) && arrow.DataType.isList(source)) {
    const child = castData(data.children[0]!, target.children[0]!.type, `${where}.element`);
    return data.clone(target, data.offset, data.length, data.nullCount, undefined, [child]);
  }
  if (arrow.DataType.isMap(target) && arrow.DataType.isMap(source)) {
    const child = castData(data.children[0]!, target.children[0]!.type, where);
    return data.clone(target, data.offset, data.length, data.nullCount, undefined, [child]);
  }
  if (arrow.DataType.isTimestamp(target) && arrow.DataType.isTimestamp(source)) {
    if (source.unit === target.unit) return data.clone(target);
    return replaceValues(data, target, rescale(data.values as BigInt64Array, source.unit, target.unit));
  }
  // Paimon writes TIME as an ORC INT of milliseconds of the day: the layout of Arrow's Time32(ms).
  if (arrow.DataType.isTime(target) && arrow.DataType.isInt(source) && source.bitWidth === 32 && target.bitWidth === 32) {
    return data.clone(target);
  }
  if (arrow.DataType.isInt(target) && arrow.DataType.isInt(source)) {
    if (source.bitWidth === target.bitWidth && source.isSigned === target.isSigned) return data.clone(target);
    return replaceValues(data, target, convertInts(data, target, where));
  }
  if (arrow.DataType.isDecimal(target) && arrow.DataType.isDecimal(source)) {
    if (source.scale !== target.scale || source.bitWidth !== target.bitWidth) {
      throw new FormatError(
        `${where}: cannot read ${String(source)} as ${String(target)}; the file's decimal layout differs from the schema`,
      );
    }
    return data.clone(target);
  }
  if (sameKind(source, target)) return data.clone(target);
  throw new FormatError(`${where}: cannot read Arrow type ${String(source)} as ${String(target)}`);
}

/** Floor-rescales int64 timestamps (floor, so pre-1970 values round towards -infinity). */
export function rescale(values: BigInt64Array, from: arrow.TimeUnit, to: arrow.TimeUnit): BigInt64Array {
  const f = NANOS_PER_UNIT[from];
  const t = NANOS_PER_UNIT[to];
  const out = new BigInt64Array(values.length);
  if (f >= t) {
    const m = f / t;
    for (let i = 0; i < values.length; i++) out[i] = values[i]! * m;
  } else {
    const d = t / f;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      const q = v / d;
      out[i] = v < 0n && q * d !== v ? q - 1n : q;
    }
  }
  return out;
}

function sameKind(a: arrow.DataType, b: arrow.DataType): boolean {
  if (a.typeId !== b.typeId) return false;
  if (arrow.DataType.isFloat(a) && arrow.DataType.isFloat(b)) return a.precision === b.precision;
  if (arrow.DataType.isDate(a) && arrow.DataType.isDate(b)) return a.unit === b.unit;
  if (arrow.DataType.isTime(a) && arrow.DataType.isTime(b)) return a.unit === b.unit && a.bitWidth === b.bitWidth;
  return true;
}

function convertInts(data: arrow.Data, target: arrow.Int, where: string): IntArray | BigInt64Array {
  const values = data.values as IntArray | BigInt64Array;
  const Ctor = target.ArrayType as unknown as { new (n: number): IntArray | BigInt64Array };
  const out = new Ctor(values.length);
  const big = out instanceof BigInt64Array || out instanceof BigUint64Array;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (big) (out as BigInt64Array)[i] = BigInt(v);
    else {
      const n = Number(v);
      (out as IntArray)[i] = n;
      // Null slots may hold anything; only valid values must fit.
      if ((out as IntArray)[i] !== n && isValidAt(data, i)) {
        throw new FormatError(`${where}: value ${n} does not fit ${String(target)}`);
      }
    }
  }
  return out;
}

function isValidAt(data: arrow.Data, bufferIndex: number): boolean {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0) return true;
  return ((bitmap[bufferIndex >> 3]! >> (bufferIndex & 7)) & 1) === 1;
}

function replaceValues(data: arrow.Data, target: arrow.DataType, values: ArrayBufferView): arrow.Data {
  const buffers = [data.valueOffsets, values, data.nullBitmap, data.typeIds];
  return data.clone(target, data.offset, data.length, data.nullCount, buffers as never);
}
