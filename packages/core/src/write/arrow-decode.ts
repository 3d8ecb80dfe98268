/**
 * Other Arrow encodings of a column's values, decoded to the encoding the table writes. apache-arrow
 * builds them by default: `tableFromArrays` / `tableFromJSON` dictionary-encode strings, make every
 * JS number a Float64 and every Date a millisecond timestamp, and give an all-null column the Null
 * type; other producers send LargeUtf8 / LargeBinary. A value is converted only when it is exactly
 * representable (an integral Float64 within range, a timestamp at midnight UTC for a DATE);
 * anything else is refused naming the row.
 */
import * as arrow from 'apache-arrow';
import { nullData, takeChunks } from '../read/arrow-take.js';
import { isValidAt } from './arrow-validity.js';

const MS_PER_DAY = 86_400_000;
const MS_PER_UNIT: Readonly<Record<number, number>> = {
  [arrow.TimeUnit.SECOND]: 1000,
  [arrow.TimeUnit.MILLISECOND]: 1,
  [arrow.TimeUnit.MICROSECOND]: 1 / 1000,
  [arrow.TimeUnit.NANOSECOND]: 1 / 1_000_000,
};

/** A fresh validity bitmap of `data` (starting at row 0), or undefined when no row is null. */
function validity(data: arrow.Data, also: (i: number) => boolean = () => true): { bitmap: Uint8Array | undefined; nullCount: number } {
  const n = data.length;
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < n; i++) {
    if (isValidAt(data, i) && also(i)) bitmap[i >> 3]! |= 1 << (i & 7);
    else nullCount++;
  }
  return { bitmap: nullCount === 0 ? undefined : bitmap, nullCount };
}

/**
 * `data` in an encoding {@link conformData} takes for `target`: a dictionary decoded, a Null column
 * as nulls of `target`, large offsets narrowed, Float64 integers, integer doubles and timestamps of
 * whole days converted. Returns `data` itself when none applies.
 *
 * @throws Error naming the row whose value has no exact equivalent.
 */
export function decodeEncoding(data: arrow.Data, target: arrow.DataType): arrow.Data {
  const src = data.type as arrow.DataType;
  if (arrow.DataType.isDictionary(src)) return decodeDictionary(data as arrow.Data<arrow.Dictionary>);
  if (src.typeId === arrow.Type.Null) return nullData(target, data.length);
  if (
    (arrow.DataType.isUtf8(target) || arrow.DataType.isBinary(target)) &&
    (src.typeId === arrow.Type.LargeUtf8 || src.typeId === arrow.Type.LargeBinary)
  ) {
    return narrowOffsets(data, target);
  }
  if (arrow.DataType.isInt(target) && arrow.DataType.isFloat(src)) return floatsToInts(data, target);
  if (arrow.DataType.isFloat(target) && arrow.DataType.isInt(src)) return intsToFloats(data, target);
  if (arrow.DataType.isDate(target) && target.unit === arrow.DateUnit.DAY) {
    const days = target as arrow.DateDay;
    if (arrow.DataType.isTimestamp(src)) return instantsToDays(data, MS_PER_UNIT[src.unit]!, days);
    if (arrow.DataType.isDate(src) && src.unit === arrow.DateUnit.MILLISECOND) return instantsToDays(data, 1, days);
  }
  return data;
}

/** The dictionary's values gathered by the indices; a null index or a null value is a null row. */
function decodeDictionary(data: arrow.Data<arrow.Dictionary>): arrow.Data {
  const type = data.type;
  const dictionary = data.dictionary;
  const n = data.length;
  const chunks = dictionary?.data ?? [];
  const starts = [0];
  for (const c of chunks) starts.push(starts[starts.length - 1]! + c.length);
  const size = starts[starts.length - 1]!;
  if (size === 0) {
    for (let i = 0; i < n; i++) if (isValidAt(data, i)) throw new Error(`dictionary index at row ${i} points into an empty dictionary`);
    return nullData(type.dictionary, n);
  }
  const indices = data.values as unknown as ArrayLike<number | bigint>;
  const chunkOf = new Uint32Array(n);
  const rowOf = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (!isValidAt(data, i)) continue; // gathered from row 0, then nulled below
    const k = Number(indices[i]);
    if (!Number.isInteger(k) || k < 0 || k >= size)
      throw new Error(`dictionary index ${k} at row ${i} is outside the dictionary of ${size} values`);
    let c = 0;
    while (starts[c + 1]! <= k) c++;
    chunkOf[i] = c;
    rowOf[i] = k - starts[c]!;
  }
  const taken = takeChunks(chunks, { chunks: chunkOf, rows: rowOf }, type.dictionary);
  if (data.nullCount === 0) return taken;
  const { bitmap, nullCount } = validity(taken, (i) => isValidAt(data, i));
  return taken.clone(taken.type, taken.offset, n, nullCount, [taken.valueOffsets, taken.values, bitmap, taken.typeIds] as never);
}

/** LargeUtf8 / LargeBinary (64-bit offsets) as Utf8 / Binary. */
function narrowOffsets(data: arrow.Data, target: arrow.DataType): arrow.Data {
  const n = data.length;
  const wide = data.valueOffsets as unknown as ArrayLike<bigint | number>;
  const first = Number(wide[0]);
  const total = Number(wide[n]) - first;
  if (total > 2 ** 31 - 1) throw new Error(`${total} bytes of values do not fit one batch of 32-bit offsets: split the batch`);
  const valueOffsets = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) valueOffsets[i] = Number(wide[i]) - first;
  const bytes = (data.values as Uint8Array).subarray(first, first + total);
  const { bitmap, nullCount } = validity(data);
  return arrow.makeData({ type: target as arrow.Utf8, length: n, nullCount, nullBitmap: bitmap, valueOffsets, data: bytes });
}

/** Float values (apache-arrow's encoding of every JS number) that are integers within the target's range. */
function floatsToInts(data: arrow.Data, target: arrow.Int): arrow.Data {
  const n = data.length;
  const values = data.values as unknown as ArrayLike<number>;
  const big = target.bitWidth === 64;
  const [lo, hi] = big
    ? [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]
    : target.isSigned
      ? [-(2 ** (target.bitWidth - 1)), 2 ** (target.bitWidth - 1) - 1]
      : [0, 2 ** target.bitWidth - 1];
  const out = new (target.ArrayType as unknown as new (n: number) => Record<number, number | bigint>)(n);
  for (let i = 0; i < n; i++) {
    if (!isValidAt(data, i)) continue;
    const v = values[i]!;
    if (!Number.isInteger(v)) throw new Error(`value ${v} at row ${i} is not an integer`);
    if (v < lo || v > hi) {
      throw new Error(
        big
          ? `value ${v} at row ${i} is beyond 2^53, where a Float64 no longer holds every integer: pass BIGINT values as bigint (Int64)`
          : `value ${v} at row ${i} does not fit ${String(target)}`,
      );
    }
    out[i] = big ? BigInt(v) : v;
  }
  const { bitmap, nullCount } = validity(data);
  return arrow.makeData({ type: target, length: n, nullCount, nullBitmap: bitmap, data: out as never });
}

/** Integers for a FLOAT / DOUBLE column, when the float holds each exactly. */
function intsToFloats(data: arrow.Data, target: arrow.Float): arrow.Data {
  const n = data.length;
  const values = data.values as unknown as ArrayLike<number | bigint>;
  const limit = target.precision === arrow.Precision.SINGLE ? 2 ** 24 : 2 ** 53;
  const out = new (target.ArrayType as unknown as new (n: number) => Record<number, number>)(n);
  for (let i = 0; i < n; i++) {
    if (!isValidAt(data, i)) continue;
    const v = Number(values[i]!);
    if (Math.abs(v) > limit || BigInt(v) !== BigInt(values[i]!))
      throw new Error(`value ${String(values[i])} at row ${i} has no exact ${String(target)}`);
    out[i] = v;
  }
  const { bitmap, nullCount } = validity(data);
  return arrow.makeData({ type: target, length: n, nullCount, nullBitmap: bitmap, data: out as never });
}

/** Instants (timestamps, Date64) at midnight UTC as days since the epoch, for a DATE column. */
function instantsToDays(data: arrow.Data, msPerUnit: number, target: arrow.DateDay): arrow.Data {
  const n = data.length;
  const values = data.values as unknown as ArrayLike<bigint | number>;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (!isValidAt(data, i)) continue;
    const ms = Number(values[i]!) * msPerUnit;
    if (!Number.isInteger(ms / MS_PER_DAY)) {
      throw new Error(`${new Date(ms).toISOString()} at row ${i} is not midnight UTC: a DATE holds whole days`);
    }
    out[i] = ms / MS_PER_DAY;
  }
  const { bitmap, nullCount } = validity(data);
  return arrow.makeData({ type: target, length: n, nullCount, nullBitmap: bitmap, data: out });
}
