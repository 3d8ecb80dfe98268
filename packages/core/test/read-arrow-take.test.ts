import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { nullData, takeChunks, takeRows } from '../src/read/arrow-take.js';
import { valueReader } from '../src/read/arrow-values.js';

function vec<T extends arrow.DataType>(type: T, values: unknown[]): arrow.Data<T> {
  return arrow.vectorFromArray(values, type).data[0]! as arrow.Data<T>;
}

describe('takeChunks', () => {
  it('gathers ints, strings and nulls across chunks in the requested order', () => {
    const a = vec(new arrow.Int32(), [1, null, 3]);
    const b = vec(new arrow.Int32(), [10, 20]);
    const out = arrow.makeVector(takeChunks([a, b], { chunks: [1, 0, 0, 1], rows: [1, 1, 2, 0] }, new arrow.Int32()));
    expect([...out]).toEqual([20, null, 3, 10]);

    const s1 = vec(new arrow.Utf8(), ['x', 'yy', null]);
    const s2 = vec(new arrow.Utf8(), ['zzz']);
    const strs = arrow.makeVector(takeChunks([s1, s2], { chunks: [1, 0, 0, 0], rows: [0, 2, 1, 0] }, new arrow.Utf8()));
    expect([...strs]).toEqual(['zzz', null, 'yy', 'x']);
  });

  it('keeps 128-bit decimals exact and bigint values intact', () => {
    const type = new arrow.Decimal(2, 38, 128);
    const words = new Uint32Array(8);
    // row 0 = 123456789012345678901234567890.12 (unscaled 12345678901234567890123456789012), row 1 = -5 (unscaled)
    const big = 12345678901234567890123456789012n;
    for (let w = 0; w < 4; w++) words[w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
    const neg = BigInt.asUintN(128, -5n);
    for (let w = 0; w < 4; w++) words[4 + w] = Number((neg >> BigInt(32 * w)) & 0xffffffffn);
    const data = arrow.makeData({ type, length: 2, data: words });
    const taken = takeRows(data, [1, 0]);
    const read = valueReader(taken, { root: 'DECIMAL', nullable: true, precision: 38, scale: 2 });
    expect(read(0)).toEqual({ unscaled: -5n, scale: 2 });
    expect(read(1)).toEqual({ unscaled: big, scale: 2 });

    const longs = vec(new arrow.Int64(), [1n, 9007199254740993n]);
    const readLong = valueReader(takeRows(longs, [1]), { root: 'BIGINT', nullable: true });
    expect(readLong(0)).toBe(9007199254740993n);
  });

  it('gathers booleans, lists and structs', () => {
    const bools = vec(new arrow.Bool(), [true, false, null, true]);
    expect([...arrow.makeVector(takeRows(bools, [3, 2, 1]))]).toEqual([true, null, false]);

    const listType = new arrow.List(new arrow.Field('element', new arrow.Int32(), true));
    const lists = vec(listType, [[1, 2], null, [3]]);
    const tl = arrow.makeVector(takeRows(lists, [2, 0, 1]));
    expect(tl.toArray().map((x: arrow.Vector | null) => (x === null ? null : [...x]))).toEqual([[3], [1, 2], null]);

    const structType = new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true), new arrow.Field('b', new arrow.Utf8(), true)]);
    const structs = vec(structType, [
      { a: 1, b: 'one' },
      { a: 2, b: 'two' },
    ]);
    const ts = arrow.makeVector(takeRows(structs, [1, 1, 0]));
    expect(ts.toArray().map((r: { toJSON(): unknown }) => r.toJSON())).toEqual([
      { a: 2, b: 'two' },
      { a: 2, b: 'two' },
      { a: 1, b: 'one' },
    ]);
  });

  it('builds all-null columns of any type', () => {
    const d = nullData(new arrow.Decimal(3, 20, 128), 3);
    expect(d.length).toBe(3);
    expect(d.nullCount).toBe(3);
  });
});
