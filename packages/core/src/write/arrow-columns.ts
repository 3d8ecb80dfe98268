/**
 * Building Arrow column data directly from internal values (typed arrays, one pass per column),
 * comparing adjacent rows and sizing and conforming columns — the pieces the table writer needs
 * without going through apache-arrow's slow generic builders. Reading values back and gathering
 * rows are shared with the reader (`read/arrow-values.ts`, `read/arrow-take.ts`).
 */
import * as arrow from 'apache-arrow';
import { toArrowType, utf8Vector, type DataType, type Decimal, type Timestamp } from '@tidemark/format';
import { rescaleTimestamps } from '../arrow-timestamps.js';
import { decodeEncoding } from './arrow-decode.js';
import { isValidAt } from './arrow-validity.js';
import type { WriteValue } from './value-conversion.js';

export { isValidAt };

const utf8 = new TextEncoder();

/**
 * Arrow data of one column from internal values (`values[indices[i]]`, or all values). Types follow
 * the shared Paimon → Arrow mapping (`toArrowType`).
 */
export function buildColumn(type: DataType, values: readonly WriteValue[], indices?: ArrayLike<number>): arrow.Data {
  const n = indices ? indices.length : values.length;
  const at = indices ? (i: number) => values[indices[i]!] ?? null : (i: number) => values[i] ?? null;
  const arrowType = toArrowType(type);
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nullCount = 0;
  const valid = (i: number, v: WriteValue): boolean => {
    if (v === null) {
      nullCount++;
      return false;
    }
    bitmap[i >> 3]! |= 1 << (i & 7);
    return true;
  };
  const finish = (props: Record<string, unknown>): arrow.Data =>
    arrow.makeData({ type: arrowType, length: n, nullCount, nullBitmap: nullCount > 0 ? bitmap : new Uint8Array(0), ...props } as never);

  switch (type.root) {
    case 'BOOLEAN': {
      const data = new Uint8Array((n + 7) >> 3);
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v) && v === true) data[i >> 3]! |= 1 << (i & 7);
      }
      return finish({ data });
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
    case 'FLOAT':
    case 'DOUBLE':
    case 'BIGINT': {
      // The internal values are already the Arrow values (numbers; bigints for BIGINT).
      const Ctor =
        type.root === 'TINYINT'
          ? Int8Array
          : type.root === 'SMALLINT'
            ? Int16Array
            : type.root === 'FLOAT'
              ? Float32Array
              : type.root === 'DOUBLE'
                ? Float64Array
                : type.root === 'BIGINT'
                  ? BigInt64Array
                  : Int32Array;
      const data = new Ctor(n);
      const slots = data as unknown as { [i: number]: number | bigint };
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v)) slots[i] = v as number | bigint;
      }
      return finish({ data });
    }
    case 'DECIMAL': {
      const data = new Uint32Array(4 * n);
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v)) writeInt128(data, i, (v as Decimal).unscaled);
      }
      return finish({ data });
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const data = new BigInt64Array(n);
      const p = type.precision;
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (!valid(i, v)) continue;
        const t = v as Timestamp;
        if (p <= 3) data[i] = BigInt(t.millis);
        else if (p <= 6) data[i] = BigInt(t.millis) * 1000n + BigInt(Math.floor(t.nanoOfMillis / 1000));
        else data[i] = BigInt(t.millis) * 1_000_000n + BigInt(t.nanoOfMillis);
      }
      return finish({ data });
    }
    case 'CHAR':
    case 'VARCHAR': {
      const strings = new Array<string | null>(n);
      for (let i = 0; i < n; i++) strings[i] = at(i) as string | null;
      return utf8Vector(strings).data[0]!;
    }
    case 'BINARY':
    case 'VARBINARY': {
      const valueOffsets = new Int32Array(n + 1);
      let total = 0;
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v)) total += (v as Uint8Array).length;
        valueOffsets[i + 1] = total;
      }
      const data = new Uint8Array(total);
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (v !== null) data.set(v as Uint8Array, valueOffsets[i]!);
      }
      return finish({ valueOffsets, data });
    }
    case 'ARRAY': {
      const valueOffsets = new Int32Array(n + 1);
      const flat: WriteValue[] = [];
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v)) for (const e of v as readonly WriteValue[]) flat.push(e);
        valueOffsets[i + 1] = flat.length;
      }
      return finish({ valueOffsets, child: buildColumn(type.element, flat) });
    }
    case 'MAP':
    case 'MULTISET': {
      const keyType = type.root === 'MAP' ? type.key : type.element;
      const valueType: DataType = type.root === 'MAP' ? type.value : { root: 'INT', nullable: false };
      const valueOffsets = new Int32Array(n + 1);
      const keys: WriteValue[] = [];
      const vals: WriteValue[] = [];
      for (let i = 0; i < n; i++) {
        const v = at(i);
        if (valid(i, v)) {
          for (const e of v as readonly (readonly WriteValue[])[]) {
            keys.push(e[0] ?? null);
            vals.push(e[1] ?? null);
          }
        }
        valueOffsets[i + 1] = keys.length;
      }
      const entriesType = (arrowType as arrow.Map_).children[0]!.type as arrow.Struct;
      const child = arrow.makeData({
        type: entriesType,
        length: keys.length,
        nullCount: 0,
        children: [buildColumn(keyType, keys), buildColumn(valueType, vals)],
      });
      return finish({ valueOffsets, child });
    }
    case 'ROW': {
      const columns = type.fields.map(() => new Array<WriteValue>(n));
      for (let i = 0; i < n; i++) {
        const v = at(i);
        const row = valid(i, v) ? (v as readonly WriteValue[]) : undefined;
        for (let f = 0; f < columns.length; f++) columns[f]![i] = row ? (row[f] ?? null) : null;
      }
      return finish({ children: type.fields.map((f, idx) => buildColumn(f.type, columns[idx]!)) });
    }
  }
}

/** Writes a bigint as 128-bit little-endian two's complement into 4 words at `index`. */
function writeInt128(words: Uint32Array, index: number, v: bigint): void {
  let x = BigInt.asUintN(128, v);
  for (let w = 0; w < 4; w++) {
    words[4 * index + w] = Number(x & 0xffffffffn);
    x >>= 32n;
  }
}

/**
 * A test whether row `r` (≥ 1) of an atomic-typed column holds the same raw value as row `r - 1`
 * (both null, or equal bits / equal bytes), without decoding either. Equal raw values always give
 * equal `valueReader` results and the same BinaryRow; the converse may fail (NaNs of other bits),
 * which only costs a decode. Types
 * not handled here (nested) never compare equal.
 */
export function sameAsPreviousRow(data: arrow.Data, type: DataType): (r: number) => boolean {
  let same: (r: number) => boolean;
  switch (type.root) {
    case 'BOOLEAN': {
      const bits = data.values as Uint8Array;
      const o = data.offset;
      same = (r) => {
        const a = o + r - 1;
        const b = o + r;
        return ((bits[a >> 3]! >> (a & 7)) & 1) === ((bits[b >> 3]! >> (b & 7)) & 1);
      };
      break;
    }
    case 'FLOAT':
    case 'DOUBLE': {
      // By bits: 0.0 === -0.0, but they are two keys in different buckets (key-order.ts).
      const v = data.values as Float32Array | Float64Array;
      const w = new Uint32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
      same = type.root === 'FLOAT' ? (r) => w[r] === w[r - 1] : (r) => w[2 * r] === w[2 * r - 2] && w[2 * r + 1] === w[2 * r - 1];
      break;
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
    case 'BIGINT':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const v = data.values as ArrayLike<number | bigint>;
      same = (r) => v[r] === v[r - 1];
      break;
    }
    case 'DECIMAL': {
      const w = data.values as Uint32Array;
      same = (r) =>
        w[4 * r] === w[4 * r - 4] && w[4 * r + 1] === w[4 * r - 3] && w[4 * r + 2] === w[4 * r - 2] && w[4 * r + 3] === w[4 * r - 1];
      break;
    }
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY': {
      const off = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      same = (r) => {
        const a = off[r - 1]!;
        const b = off[r]!;
        const len = b - a;
        if (off[r + 1]! - b !== len) return false;
        for (let k = 0; k < len; k++) if (bytes[a + k] !== bytes[b + k]) return false;
        return true;
      };
      break;
    }
    default:
      return () => false;
  }
  if (data.nullCount === 0) return same;
  return (r) => {
    const prev = isValidAt(data, r - 1);
    if (prev !== isValidAt(data, r)) return false;
    return !prev || same(r);
  };
}

/** Approximate in-memory size of the rows of a batch ({@link dataByteSize} of its columns). */
export function batchByteSize(batch: arrow.RecordBatch): number {
  let s = 0;
  for (const c of batch.data.children) s += dataByteSize(c);
  return s;
}

/** Approximate in-memory size of the rows of `data` (what the rows cost, not the shared buffers). */
export function dataByteSize(data: arrow.Data): number {
  const n = data.length;
  let size = data.nullBitmap && data.nullBitmap.length > 0 ? (n + 7) >> 3 : 0;
  const t = data.type as arrow.DataType;
  if (arrow.DataType.isStruct(t)) {
    for (const c of data.children) size += dataByteSize(c);
    return size;
  }
  if (data.valueOffsets) {
    const off = data.valueOffsets as Int32Array;
    size += 4 * (n + 1);
    const from = off[0] ?? 0;
    const to = off[n] ?? from;
    if (data.children.length > 0) {
      const child = data.children[0]!;
      const childN = to - from;
      size += child.length > 0 ? Math.round((dataByteSize(child) * childN) / child.length) : 0;
    } else size += to - from;
    return size;
  }
  if (arrow.DataType.isBool(t)) return size + ((n + 7) >> 3);
  const values = data.values as unknown as { BYTES_PER_ELEMENT?: number } | undefined;
  const stride = arrow.DataType.isDecimal(t) ? 4 : 1;
  return size + n * stride * (values?.BYTES_PER_ELEMENT ?? 8);
}

/** Encodes a string to UTF-8 bytes (exported for stats comparisons). */
export function utf8Bytes(s: string): Uint8Array {
  return utf8.encode(s);
}

/**
 * Re-types caller-supplied Arrow data to the table's Arrow type: other encodings of the values are
 * decoded first (`arrow-decode.ts`: dictionaries, Null columns, large offsets, JS numbers and
 * Dates), identical layouts are relabelled (timezone spelling, field names/metadata), integers are
 * widened or range-checked, timestamp units rescaled (floor). Anything else is refused.
 *
 * @throws Error with a short reason (the caller names the column).
 */
export function conformData(input: arrow.Data, target: arrow.DataType): arrow.Data {
  const data = decodeEncoding(input, target);
  const src = data.type as arrow.DataType;
  if (arrow.DataType.isStruct(target) && arrow.DataType.isStruct(src)) {
    if (src.children.length !== target.children.length)
      throw new Error(`struct has ${src.children.length} fields, expected ${target.children.length}`);
    const children = target.children.map((f, i) => conformData(data.children[i]!, f.type));
    return data.clone(target, data.offset, data.length, data.nullCount, undefined, children);
  }
  if ((arrow.DataType.isList(target) && arrow.DataType.isList(src)) || (arrow.DataType.isMap(target) && arrow.DataType.isMap(src))) {
    const child = conformData(data.children[0]!, target.children[0]!.type);
    return data.clone(target, data.offset, data.length, data.nullCount, undefined, [child]);
  }
  if (arrow.DataType.isInt(target) && arrow.DataType.isInt(src)) {
    if (src.bitWidth === target.bitWidth && src.isSigned === target.isSigned) return data.clone(target);
    const n = data.length;
    const values = data.values as unknown as ArrayLike<number | bigint>;
    const Ctor = target.ArrayType as unknown as new (n: number) => Record<number, number | bigint>;
    const out = new Ctor(n);
    const big = target.bitWidth === 64;
    const [lo, hi] = big ? [-(2n ** 63n), 2n ** 63n - 1n] : [-(2 ** (target.bitWidth - 1)), 2 ** (target.bitWidth - 1) - 1];
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      if (!isValidAt(data, i)) continue;
      if (big) {
        const b = BigInt(v);
        if (b < (lo as bigint) || b > (hi as bigint)) throw new Error(`value ${b} at row ${i} does not fit ${String(target)}`);
        out[i] = b;
      } else {
        const x = Number(v);
        if (x < (lo as number) || x > (hi as number)) throw new Error(`value ${x} at row ${i} does not fit ${String(target)}`);
        out[i] = x;
      }
    }
    return data.clone(target, data.offset, data.length, data.nullCount, [data.valueOffsets, out, data.nullBitmap, data.typeIds] as never);
  }
  if (arrow.DataType.isTimestamp(target) && arrow.DataType.isTimestamp(src)) {
    if (src.unit === target.unit) return data.clone(target);
    const out = rescaleTimestamps((data.values as BigInt64Array).subarray(0, data.length), src.unit, target.unit);
    return data.clone(target, data.offset, data.length, data.nullCount, [data.valueOffsets, out, data.nullBitmap, data.typeIds] as never);
  }
  if (arrow.DataType.isDecimal(target) && arrow.DataType.isDecimal(src)) {
    if (src.scale !== target.scale || src.bitWidth !== target.bitWidth)
      throw new Error(`${String(src)} has a different scale or width than ${String(target)}`);
    return data.clone(target);
  }
  if (src.typeId === target.typeId) {
    const same =
      (arrow.DataType.isFloat(src) && arrow.DataType.isFloat(target) && src.precision === target.precision) ||
      (arrow.DataType.isDate(src) && arrow.DataType.isDate(target) && src.unit === target.unit) ||
      (arrow.DataType.isTime(src) && arrow.DataType.isTime(target) && src.unit === target.unit) ||
      arrow.DataType.isUtf8(src) ||
      arrow.DataType.isBinary(src) ||
      arrow.DataType.isBool(src);
    if (same) return data.clone(target);
  }
  throw new Error(`expected Arrow ${String(target)}, got ${String(src)}`);
}
