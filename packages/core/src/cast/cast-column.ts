/**
 * Casting a column of a data file from the type it was written with to the read schema's type
 * (docs/format.md, "Schema evolution on read"), with Paimon's cast rules: changes that leave every
 * value's representation unchanged reuse the Arrow buffers; the rest go value by value through the
 * rule's executor (cast-executors.ts), so rounding, truncation, overflow and text formats are
 * Java's.
 */
import * as arrow from 'apache-arrow';
import { MAX_LENGTH, toArrowType, typeToString, type DataType } from '@tidemark/format';
import { rescaleTimestamps } from '../arrow-timestamps.js';
import { valueReader } from '../read/arrow-values.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';
import { buildColumn } from '../write/arrow-columns.js';
import type { WriteValue } from '../write/value-conversion.js';
import { castExecutor, type CastValue } from './cast-executors.js';
import { sameTypeIgnoringNullability } from './cast-rules.js';
import { CastValueError } from './errors.js';

const INT_RANK: Readonly<Record<string, number>> = { TINYINT: 0, SMALLINT: 1, INT: 2, BIGINT: 3 };

/**
 * `data` (a column of type `from`) as type `to`. `where` names the file and column for errors.
 *
 * @throws UnsupportedTableFeatureError when Paimon has no cast rule for the change;
 *   CastValueError for a value the rule cannot cast (Java's read fails on it too).
 */
export function castColumn(data: arrow.Data, from: DataType, to: DataType, where: string): arrow.Data {
  const target = toArrowType(to);
  const fast = castInPlace(data, from, to, target);
  if (fast !== null) return fast;
  const executor = castExecutor(from, to);
  if (executor === null) {
    const nested =
      from.root === to.root && (from.root === 'ROW' || from.root === 'ARRAY' || from.root === 'MAP' || from.root === 'MULTISET');
    throw new UnsupportedTableFeatureError(
      nested
        ? `${where}: cannot read ${typeToString(from)} as ${typeToString(to)}: changes inside nested types are not supported by tidemark`
        : `${where}: cannot read type ${typeToString(from)} as ${typeToString(to)} (Paimon has no cast between them)`,
    );
  }
  const read = castValueReader(data, from);
  const out = new Array<WriteValue>(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = read(i);
    if (v === null) {
      out[i] = null;
      continue;
    }
    try {
      out[i] = executor.cast(v) as WriteValue;
    } catch (e) {
      throw new CastValueError(where, describeValue(v), from, to, `${executor.rule}: ${(e as Error).message}`, { cause: e });
    }
  }
  return buildColumn(to, out);
}

/** The cast when the Arrow representation of every value stays as it is (or only changes width); else null. */
function castInPlace(data: arrow.Data, from: DataType, to: DataType, target: arrow.DataType): arrow.Data | null {
  const source = data.type as arrow.DataType;
  if (sameTypeIgnoringNullability(from, to)) return data.clone(target);
  const fi = INT_RANK[from.root];
  const ti = INT_RANK[to.root];
  if (fi !== undefined && ti !== undefined && fi <= ti) {
    const Ctor = (target as arrow.Int).ArrayType as unknown as { new (n: number): ArrayLike<unknown> };
    const src = data.values as ArrayLike<number | bigint>;
    const out = new Ctor(data.length) as unknown as (number | bigint)[];
    const big = to.root === 'BIGINT';
    for (let i = 0; i < data.length; i++) out[i] = big ? BigInt(src[i]!) : Number(src[i]!);
    return replaceValues(data, target, out as unknown as ArrayBufferView);
  }
  if (to.root === 'DOUBLE' && (from.root === 'FLOAT' || (fi !== undefined && fi <= 2))) {
    const src = data.values as ArrayLike<number>;
    const out = new Float64Array(data.length);
    for (let i = 0; i < data.length; i++) out[i] = src[i]!;
    return replaceValues(data, target, out);
  }
  if (from.root === 'DECIMAL' && to.root === 'DECIMAL' && from.scale === to.scale && from.precision <= to.precision)
    return data.clone(target);
  if ((from.root === 'TIMESTAMP' || from.root === 'TIMESTAMP_LTZ') && to.root === from.root && from.precision <= to.precision) {
    const s = source as arrow.Timestamp;
    const t = target as arrow.Timestamp;
    if (s.unit === t.unit) return data.clone(target);
    return replaceValues(data, target, rescaleTimestamps(data.values as BigInt64Array, s.unit, t.unit));
  }
  const chars = (t: DataType): boolean => t.root === 'CHAR' || t.root === 'VARCHAR';
  const binaries = (t: DataType): boolean => t.root === 'BINARY' || t.root === 'VARBINARY';
  const length = (t: DataType): number => (t as { length: number }).length;
  // No value can be longer than the target (and VARCHAR/VARBINARY never pad): same bytes.
  if (chars(from) && to.root === 'VARCHAR' && (to.length === MAX_LENGTH || length(from) <= to.length)) return data.clone(target);
  if (binaries(from) && to.root === 'VARBINARY' && (to.length === MAX_LENGTH || length(from) <= to.length)) return data.clone(target);
  // BinaryToStringCastRule keeps the bytes as they are (no padding, no cut).
  if (binaries(from) && chars(to)) return data.clone(target);
  if (chars(from) && to.root === 'VARBINARY' && to.length === MAX_LENGTH) return data.clone(target);
  return null;
}

/** Reads row `i` of `data` as an internal value, nested types included (for the executors). */
export function castValueReader(data: arrow.Data, type: DataType): (i: number) => CastValue {
  switch (type.root) {
    case 'ARRAY': {
      const offsets = data.valueOffsets as Int32Array;
      const child = castValueReader(data.children[0]!, type.element);
      return (i) => {
        if (!data.getValid(i)) return null;
        const out: CastValue[] = [];
        for (let j = offsets[i]!; j < offsets[i + 1]!; j++) out.push(child(j));
        return out;
      };
    }
    case 'MAP': {
      const offsets = data.valueOffsets as Int32Array;
      const entries = data.children[0]!;
      const key = castValueReader(entries.children[0]!, type.key);
      const value = castValueReader(entries.children[1]!, type.value);
      return (i) => {
        if (!data.getValid(i)) return null;
        const out: CastValue[] = [];
        for (let j = offsets[i]!; j < offsets[i + 1]!; j++) out.push([key(j), value(j)]);
        return out;
      };
    }
    case 'ROW': {
      const fields = type.fields.map((f, k) => castValueReader(data.children[k]!, f.type));
      return (i) => (data.getValid(i) ? fields.map((f) => f(i)) : null);
    }
    default:
      return valueReader(data, type);
  }
}

function replaceValues(data: arrow.Data, target: arrow.DataType, values: ArrayBufferView): arrow.Data {
  return arrow.makeData({
    type: target,
    length: data.length,
    nullCount: data.nullCount,
    nullBitmap: copyValidity(data),
    data: values,
  } as never);
}

function copyValidity(data: arrow.Data): Uint8Array | undefined {
  if (data.nullCount === 0) return undefined;
  const out = new Uint8Array(((data.length + 63) & ~63) >> 3);
  for (let i = 0; i < data.length; i++) if (data.getValid(i)) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

function describeValue(v: CastValue): string {
  if (typeof v === 'string') return `'${v.length > 60 ? v.slice(0, 60) + '…' : v}'`;
  if (typeof v === 'bigint') return String(v);
  if (v instanceof Uint8Array) return `X'${Buffer.from(v.subarray(0, 32)).toString('hex')}${v.length > 32 ? '…' : ''}'`;
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? String(v);
}
