/**
 * Float and double keys in Java's order, property-tested against `Double.compare` and
 * `Float.compare` as Java's source states them:
 *
 *     if (d1 < d2) return -1;  if (d1 > d2) return 1;
 *     long thisBits = Double.doubleToLongBits(d1), anotherBits = Double.doubleToLongBits(d2);
 *     return thisBits == anotherBits ? 0 : (thisBits < anotherBits ? -1 : 1);
 *
 * where `doubleToLongBits` maps every NaN to 0x7ff8000000000000L (`floatToIntBits`: 0x7fc00000).
 * Values include NaNs of many bit patterns, ±0.0, ±Infinity, subnormals and random bits. Checked:
 * the comparator every key path uses (key-order.ts), the write buffer's normalized keys (sort and
 * key equality), and the bucket hash's BinaryRow (one NaN).
 */
import { describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { bucketOfValues, parseTypeString, serializeBinaryRow, type DataField } from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable } from '../src/index.js';
import { compareFloats, compareKeys } from '../src/key-order.js';
import { mergeEngineOptions } from '../src/read/merge-engine.js';
import { KeyValueSortBuffer } from '../src/write/key-value/sort-buffer.js';
import { seededRandom } from './helpers.js';

const DOUBLE_NAN_BITS = 0x7ff8000000000000n;
const FLOAT_NAN_BITS = 0x7fc00000;

function doubleToLongBits(d: number): bigint {
  if (Number.isNaN(d)) return DOUBLE_NAN_BITS;
  return new BigInt64Array(new Float64Array([d]).buffer)[0]!;
}

function floatToIntBits(f: number): number {
  if (Number.isNaN(f)) return FLOAT_NAN_BITS;
  return new Int32Array(new Float32Array([f]).buffer)[0]!;
}

/** Java's `Double.compare` / `Float.compare` as their source states them, over `bitsOf` (doubleToLongBits / floatToIntBits). */
function javaCompare(bitsOf: (v: number) => bigint | number): (a: number, b: number) => number {
  return (d1, d2) => {
    if (d1 < d2) return -1;
    if (d1 > d2) return 1;
    const a = bitsOf(d1);
    const b = bitsOf(d2);
    return a === b ? 0 : a < b ? -1 : 1;
  };
}
const javaDoubleCompare = javaCompare(doubleToLongBits);
const javaFloatCompare = javaCompare(floatToIntBits);

/** Doubles as raw bits: specials, NaNs with payloads and signs, subnormals, random patterns. */
function doubleBits(rand: (n: number) => number, count: number): BigUint64Array {
  const specials = [
    0n,
    0x8000000000000000n, // -0.0
    0x7ff0000000000000n, // +Infinity
    0xfff0000000000000n, // -Infinity
    0x7ff8000000000000n, // Java's NaN
    0x7ff8000000000001n,
    0x7ff0000000000001n, // signalling NaN
    0xfff8000000000000n, // negative NaN
    0xffffffffffffffffn,
    0x0000000000000001n, // smallest subnormal
    0x800fffffffffffffn, // negative subnormal
    0x3ff0000000000000n, // 1.0
    0xbff0000000000000n, // -1.0
  ];
  const out = new BigUint64Array(count);
  for (let i = 0; i < count; i++) {
    if (rand(3) === 0) out[i] = specials[rand(specials.length)]!;
    else out[i] = (BigInt(rand(0x100000)) << 44n) | (BigInt(rand(0x100000)) << 24n) | BigInt(rand(0x1000000));
  }
  return out;
}

function floatBits(rand: (n: number) => number, count: number): Uint32Array {
  const specials = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00001, 0x7f800001, 0xffc00000, 1, 0x3f800000, 0xbf800000];
  return Uint32Array.from(
    { length: count },
    () => (rand(3) === 0 ? specials[rand(specials.length)]! : (rand(0x10000) << 16) | rand(0x10000)) >>> 0,
  );
}

describe('float keys in Java order', () => {
  it('compareFloats is Double.compare and Float.compare, for every pair', () => {
    const rand = seededRandom(1993);
    const mismatches: string[] = [];
    const doubles = Array.from(new Float64Array(doubleBits(rand, 400).buffer));
    for (const a of doubles) {
      for (const b of doubles) if (compareFloats(a, b) !== javaDoubleCompare(a, b)) mismatches.push(`double ${a} vs ${b}`);
    }
    const floats = Array.from(new Float32Array(floatBits(rand, 300).buffer));
    for (const a of floats)
      for (const b of floats) if (compareFloats(a, b) !== javaFloatCompare(a, b)) mismatches.push(`float ${a} vs ${b}`);
    expect(mismatches.slice(0, 5)).toEqual([]);
    // Keys of several fields: the first difference decides, nulls first.
    expect(compareKeys([NaN, 1], [Infinity, 2])).toBe(1);
    expect(compareKeys([-0, 5], [0, 1])).toBe(-1);
    expect(compareKeys([NaN, 1], [NaN, 1])).toBe(0);
    expect(compareKeys([null, 1], [-Infinity, 1])).toBe(-1);
  });

  for (const [typeName, bitsOf, javaCompare] of [
    ['DOUBLE NOT NULL', (rand: (n: number) => number, n: number) => new Float64Array(doubleBits(rand, n).buffer), javaDoubleCompare],
    ['FLOAT NOT NULL', (rand: (n: number) => number, n: number) => new Float32Array(floatBits(rand, n).buffer), javaFloatCompare],
  ] as const) {
    it(`the write buffer sorts and merges ${typeName} keys as Java compares them`, () => {
      const rand = seededRandom(typeName.length * 31);
      const fields: DataField[] = [
        { id: 0, name: 'k', type: parseTypeString(typeName) },
        { id: 1, name: 'n', type: parseTypeString('INT NOT NULL') },
      ];
      const schema = { version: 3, id: 0, fields, highestFieldId: 1, partitionKeys: [], primaryKeys: ['k'], options: {}, timeMillis: 0 };
      for (let trial = 0; trial < 6; trial++) {
        const n = trial < 2 ? 20 : 2000;
        const values = bitsOf(rand, n);
        const arrival = Int32Array.from({ length: n }, (_, i) => i);
        const buffer = new KeyValueSortBuffer(fields, [fields[0]!]);
        const k = arrow.makeData({
          type: typeName.startsWith('DOUBLE') ? new arrow.Float64() : new arrow.Float32(),
          length: n,
          data: values,
        });
        buffer.add([k, arrow.makeData({ type: new arrow.Int32(), length: n, data: arrival })], new Int8Array(n));
        const sorted = buffer.sort(0n);
        // The model: a stable sort by Java's comparator (ties in arrival order).
        const expected = Array.from(arrival).sort((a, b) => javaCompare(values[a]!, values[b]!) || a - b);
        expect(Array.from(sorted.order)).toEqual(expected);
        // One merged row per Java-distinct key, the latest record of each.
        const merged = sorted.merge(mergeEngineOptions(schema as never));
        const latest = new Map<string, number>();
        for (const i of arrival)
          latest.set(String(typeName.startsWith('DOUBLE') ? doubleToLongBits(values[i]!) : floatToIntBits(values[i]!)), i);
        expect(merged.length).toBe(latest.size);
        const kept = Array.from(merged.columns()[1]!.values as Int32Array);
        expect(kept.sort((a, b) => a - b)).toEqual([...latest.values()].sort((a, b) => a - b));
      }
    });
  }

  it('the bucket hash sees one NaN, and -0.0 apart from 0.0', () => {
    const double = parseTypeString('DOUBLE NOT NULL');
    const float = parseTypeString('FLOAT NOT NULL');
    const nan = (bits: bigint): number => new Float64Array(new BigUint64Array([bits]).buffer)[0]!;
    const canonical = serializeBinaryRow([double], [NaN]);
    for (const bits of [0x7ff8000000000001n, 0xfff8000000000000n, 0x7ff0000000000001n]) {
      expect(serializeBinaryRow([double], [nan(bits)])).toEqual(canonical);
      expect(bucketOfValues([double], [nan(bits)], 7)).toBe(bucketOfValues([double], [NaN], 7));
    }
    // Java's Double.NaN bits in the row: 0x7ff8000000000000, little endian, after the 8-byte header.
    expect(Array.from(canonical.subarray(canonical.length - 8))).toEqual([0, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
    const floatNan = new Float32Array(new Uint32Array([0xffc00001]).buffer)[0]!;
    expect(serializeBinaryRow([float], [floatNan])).toEqual(serializeBinaryRow([float], [NaN]));
    expect(serializeBinaryRow([double], [-0])).not.toEqual(serializeBinaryRow([double], [0]));
  });

  it('a writer routes -0.0 to its own bucket, also right after a 0.0 row', async () => {
    // With 7 buckets Java puts 0.0 in bucket 1 and -0.0 in bucket 5 (their BinaryRows differ).
    const double = parseTypeString('DOUBLE NOT NULL');
    expect([bucketOfValues([double], [0], 7), bucketOfValues([double], [-0], 7)]).toEqual([1, 5]);
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://key-order-${process.pid}/wh`, { fileIO: io });
    for (const primaryKeys of [['k'], []]) {
      const name = `db.t${primaryKeys.length}`;
      await catalog.createTable(name, {
        fields: [{ name: 'k', type: 'DOUBLE NOT NULL' }],
        primaryKeys,
        options: { bucket: '7', ...(primaryKeys.length === 0 ? { 'bucket-key': 'k' } : {}) },
      });
      const writer = (await openTable(catalog.tableLocation(name), { fileIO: io })).newBatchWrite({ recordInflight: false });
      await writer.write([{ k: 0 }, { k: -0 }, { k: -0 }, { k: 0 }]);
      const buckets = (await writer.prepareCommit()).map((m) => [m.bucket, m.newFiles.reduce((n, f) => n + f.rowCount, 0)]);
      expect(buckets.sort(), name).toEqual(
        primaryKeys.length > 0
          ? [
              [1, 1],
              [5, 1],
            ]
          : [
              [1, 2],
              [5, 2],
            ],
      );
      await writer.close();
    }
  });

  it('a DOUBLE partition of -0.0 is its own partition (k=-0.0), also right after 0.0', async () => {
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://key-order-part-${process.pid}/wh`, { fileIO: io });
    await catalog.createTable('db.p', {
      fields: [
        { name: 'p', type: 'DOUBLE NOT NULL' },
        { name: 'n', type: 'INT' },
      ],
      partitionKeys: ['p'],
    });
    const table = await openTable(catalog.tableLocation('db.p'), { fileIO: io });
    const writer = table.newBatchWrite({ recordInflight: false });
    await writer.write([
      { p: 0, n: 1 },
      { p: -0, n: 2 },
    ]);
    const messages = await writer.prepareCommit();
    expect(messages.map((m) => table.context.paths.partitionPath(m.partition)).sort()).toEqual(['p=-0.0/', 'p=0.0/']);
    await writer.close();
  });
});
