/**
 * Gathering rows of Arrow data by position ("take"), across several chunks of the same type, and
 * building all-null columns. apache-arrow JS has no compute kernels, and the merge-on-read and
 * filter steps must keep the data Arrow-native (exact decimals, nanosecond timestamps), so values
 * are copied buffer by buffer instead of going through JS values.
 *
 * Buffer conventions of apache-arrow JS (as its own `get` visitor uses them): fixed-width values
 * and value offsets are already sliced to the Data's offset; boolean value bits and validity bits
 * are addressed at `offset + i`; struct children are sliced like their parent.
 */
import * as arrow from 'apache-arrow';

/** Row positions to gather: row `rows[k]` of chunk `chunks[k]`, for every output row k. */
export interface TakeIndices {
  readonly chunks: ArrayLike<number>;
  readonly rows: ArrayLike<number>;
}

/** Gathers the given rows of `sources` (chunks of one column, all of `type`) into one Data. */
export function takeChunks(sources: readonly arrow.Data[], indices: TakeIndices, type: arrow.DataType): arrow.Data {
  const n = indices.rows.length;
  const { bitmap, nullCount } = gatherValidity(sources, indices);
  const nullBitmap = nullCount === 0 ? undefined : bitmap;

  if (arrow.DataType.isStruct(type)) {
    const children = type.children.map((f, c) =>
      takeChunks(
        sources.map((s) => s.children[c]!),
        indices,
        f.type,
      ),
    );
    return arrow.makeData({ type, length: n, nullCount, nullBitmap, children });
  }
  if (arrow.DataType.isList(type) || arrow.DataType.isMap(type)) {
    const offsets = new Int32Array(n + 1);
    const childChunks: number[] = [];
    const childRows: number[] = [];
    for (let k = 0; k < n; k++) {
      const src = sources[indices.chunks[k]!]!;
      const r = indices.rows[k]!;
      const vo = src.valueOffsets as Int32Array;
      const start = vo[r]!;
      const end = vo[r + 1]!;
      for (let j = start; j < end; j++) {
        childChunks.push(indices.chunks[k]!);
        childRows.push(j);
      }
      offsets[k + 1] = offsets[k]! + (end - start);
    }
    const childType = type.children[0]!.type;
    const child = takeChunks(
      sources.map((s) => s.children[0]!),
      { chunks: childChunks, rows: childRows },
      childType,
    );
    // Two identical calls: makeData's overloads need `type` narrowed to List or Map.
    if (arrow.DataType.isList(type)) {
      return arrow.makeData({ type, length: n, nullCount, nullBitmap, valueOffsets: offsets, child });
    }
    return arrow.makeData({ type, length: n, nullCount, nullBitmap, valueOffsets: offsets, child });
  }
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
    return arrow.makeData({ type, length: n, nullCount, nullBitmap, ...takeVariableWidth(sources, indices) } as never);
  }
  if (arrow.DataType.isBool(type)) {
    const bits = new Uint8Array(((n + 63) & ~63) >> 3);
    for (let k = 0; k < n; k++) {
      const src = sources[indices.chunks[k]!]!;
      const pos = src.offset + indices.rows[k]!;
      if ((((src.values as Uint8Array)[pos >> 3]! >> (pos & 7)) & 1) === 1) bits[k >> 3]! |= 1 << (k & 7);
    }
    return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: bits });
  }
  if (arrow.DataType.isNull(type)) {
    return arrow.makeData({ type, length: n });
  }
  // Fixed-width: ints, floats, decimals, dates, times, timestamps, fixed-size binary.
  return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: takeFixedWidth(sources, indices, type) } as never);
}

/** The offsets and bytes of the gathered rows of string or binary chunks. */
function takeVariableWidth(sources: readonly arrow.Data[], indices: TakeIndices): { valueOffsets: Int32Array; data: Uint8Array } {
  const n = indices.rows.length;
  // Each chunk's buffers looked up once, not per row.
  const allOffsets = sources.map((src) => src.valueOffsets as Int32Array);
  const allValues = sources.map((src) => src.values as Uint8Array);
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let k = 0; k < n; k++) {
    const vo = allOffsets[indices.chunks[k]!]!;
    const r = indices.rows[k]!;
    total += vo[r + 1]! - vo[r]!;
    offsets[k + 1] = total;
  }
  const bytes = new Uint8Array(total);
  for (let k = 0; k < n; k++) {
    const c = indices.chunks[k]!;
    const vo = allOffsets[c]!;
    const r = indices.rows[k]!;
    const from = vo[r]!;
    const len = vo[r + 1]! - from;
    const values = allValues[c]!;
    // Short values: a byte loop avoids allocating a subarray view per row.
    if (len <= 32) for (let j = 0, at = offsets[k]!; j < len; j++) bytes[at + j] = values[from + j]!;
    else bytes.set(values.subarray(from, from + len), offsets[k]!);
  }
  return { valueOffsets: offsets, data: bytes };
}

/** The values of the gathered rows of fixed-width chunks, in the chunks' typed array type. */
function takeFixedWidth(sources: readonly arrow.Data[], indices: TakeIndices, type: arrow.DataType): ArrayLike<unknown> {
  const n = indices.rows.length;
  const template = sources[0];
  const stride = template?.stride ?? 1;
  const ArrayType = (template?.values?.constructor ?? (type as { ArrayType?: unknown }).ArrayType) as {
    new (length: number): ArrayLike<unknown> & { buffer: ArrayBufferLike };
  };
  const out = new ArrayType(n * stride);
  const bytesPer = (out as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
  if (stride === 1 && bytesPer !== 8) {
    const target = out as unknown as number[];
    const all = sources.map((src) => src.values as unknown as number[]);
    for (let k = 0; k < n; k++) target[k] = all[indices.chunks[k]!]![indices.rows[k]!]!;
  } else if (bytesPer * stride === 8 && sources.every((src) => ((src.values as { byteOffset: number }).byteOffset & 3) === 0)) {
    // 64-bit values (BIGINT, DOUBLE, TIMESTAMP): two words each.
    const target = new Uint32Array(out.buffer);
    const views = sources.map((src) => {
      const v = src.values as { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };
      return new Uint32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
    });
    for (let k = 0; k < n; k++) {
      const from = views[indices.chunks[k]!]!;
      const at = 2 * indices.rows[k]!;
      target[2 * k] = from[at]!;
      target[2 * k + 1] = from[at + 1]!;
    }
  } else {
    // Copied as 32-bit words (or bytes): no BigInt per 64-bit value, NaN bits kept, no view per row.
    const aligned = sources.every((src) => ((src.values as { byteOffset: number }).byteOffset & 3) === 0);
    const unit = aligned && (bytesPer * stride) % 4 === 0 ? 4 : 1;
    const per = (bytesPer * stride) / unit;
    const target = unit === 4 ? new Uint32Array(out.buffer) : new Uint8Array(out.buffer);
    const views = sources.map((src) => {
      const v = src.values as ArrayLike<unknown> & { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };
      return unit === 4 ? new Uint32Array(v.buffer, v.byteOffset, v.byteLength >> 2) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    });
    for (let k = 0; k < n; k++) {
      const from = views[indices.chunks[k]!]!;
      const at = indices.rows[k]! * per;
      const to = k * per;
      for (let j = 0; j < per; j++) target[to + j] = from[at + j]!;
    }
  }
  return out;
}

function gatherValidity(sources: readonly arrow.Data[], indices: TakeIndices): { bitmap: Uint8Array; nullCount: number } {
  const n = indices.rows.length;
  const bitmap = new Uint8Array(((n + 63) & ~63) >> 3);
  let nullCount = 0;
  if (sources.every((s) => s.nullCount === 0)) {
    bitmap.fill(0xff);
    return { bitmap, nullCount };
  }
  for (let k = 0; k < n; k++) {
    const src = sources[indices.chunks[k]!]!;
    if (src.getValid(indices.rows[k]!)) bitmap[k >> 3]! |= 1 << (k & 7);
    else nullCount++;
  }
  return { bitmap, nullCount };
}

/** Gathers rows of one Data (single chunk) by position. */
export function takeRows(data: arrow.Data, rows: ArrayLike<number>): arrow.Data {
  return takeChunks([data], { chunks: new Uint32Array(rows.length), rows }, data.type as arrow.DataType);
}

/** A column of `length` nulls of any Arrow type (for columns a data file does not have). */
export function nullData(type: arrow.DataType, length: number): arrow.Data {
  const builder = arrow.makeBuilder({ type, nullValues: [null, undefined] });
  for (let i = 0; i < length; i++) builder.append(null);
  return builder.finish().flush() as arrow.Data;
}

/** Assembles a RecordBatch from per-field Data of equal length. */
export function makeBatch(schema: arrow.Schema, columns: readonly arrow.Data[], length: number): arrow.RecordBatch {
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length,
    nullCount: 0,
    children: [...columns],
  });
  return new arrow.RecordBatch(schema, data);
}

/** Keeps the rows of `batch` whose positions are listed (in that order). */
export function takeBatch(batch: arrow.RecordBatch, rows: readonly number[] | Uint32Array): arrow.RecordBatch {
  const columns = batch.data.children.map((c) => takeRows(c, rows));
  return makeBatch(batch.schema, columns, rows.length);
}
