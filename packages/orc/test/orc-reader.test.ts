/**
 * The ORC reader's parts against the ORC specification's own encoding examples, and whole-file
 * behaviour on the ORC project's example files: projection fetches only the projected streams,
 * predicates skip stripes and row groups by their statistics, decoded values agree with the
 * footer statistics of files that have no expected output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import { sharedFixturesDir } from '../../../test/support/fixtures.js';
import { ByteCursor } from '../src/byte-cursor.js';
import { BooleanDecoder, ByteRleDecoder } from '../src/byte-rle.js';
import { IntRleV1Decoder, IntRleV2Decoder } from '../src/int-rle.js';
import { bytesSource, CorruptOrcFileError, OrcError, OrcReader, UnsupportedOrcFeatureError, type OrcSource } from '../src/index.js';

const cursor = (...bytes: number[]) => new ByteCursor(Uint8Array.from(bytes), 'test');

function ints(decoder: IntRleV1Decoder | IntRleV2Decoder, n: number): number[] {
  const out = new Array<number>(n);
  decoder.readNumbers(out, 0, n);
  return out;
}

describe('run-length encodings (the ORC specification examples)', () => {
  it('byte RLE: a run and literals', () => {
    const run = new ByteRleDecoder(cursor(0x61, 0x00));
    const out = new Uint8Array(100);
    run.read(out, 0, 100);
    expect([...out]).toEqual(new Array(100).fill(0));
    const literals = new ByteRleDecoder(cursor(0xfe, 0x44, 0x45));
    literals.read(out, 0, 2);
    expect([...out.subarray(0, 2)]).toEqual([0x44, 0x45]);
  });

  it('booleans are bits of byte RLE, most significant first', () => {
    const d = new BooleanDecoder(cursor(0xff, 0x80));
    expect(Array.from({ length: 8 }, () => d.next())).toEqual([true, false, false, false, false, false, false, false]);
  });

  it('integer RLE v1: runs with a delta and literals', () => {
    expect(ints(new IntRleV1Decoder(cursor(0x61, 0x00, 0x07), false), 100)).toEqual(new Array(100).fill(7));
    expect(ints(new IntRleV1Decoder(cursor(0x61, 0xff, 0x64), false), 100)).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect(ints(new IntRleV1Decoder(cursor(0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b), false), 5)).toEqual([2, 3, 6, 7, 11]);
  });

  it('integer RLE v2: short repeat, direct, patched base and delta', () => {
    expect(ints(new IntRleV2Decoder(cursor(0x0a, 0x27, 0x10), false), 5)).toEqual([10000, 10000, 10000, 10000, 10000]);
    expect(ints(new IntRleV2Decoder(cursor(0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef), false), 4)).toEqual([
      23713, 43806, 57005, 48879,
    ]);
    const patched = [
      0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46, 0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96,
      0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8,
    ];
    expect(ints(new IntRleV2Decoder(cursor(...patched), false), 20)).toEqual([
      2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090, 2100, 2110, 2120, 2130, 2140, 2150, 2160, 2170, 2180, 2190,
    ]);
    expect(ints(new IntRleV2Decoder(cursor(0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46), false), 10)).toEqual([
      2, 3, 5, 7, 11, 13, 17, 19, 23, 29,
    ]);
  });

  it('64-bit values stay exact, and a stream that ends inside a run fails', () => {
    // Short repeat of 8 bytes: zigzag(-2^63) = 2^64 - 1.
    const d = new IntRleV2Decoder(cursor(0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), true);
    const out = new BigInt64Array(3);
    d.readBigInts(out, 0, 3);
    expect([...out]).toEqual([-(2n ** 63n), -(2n ** 63n), -(2n ** 63n)]);
    expect(() => ints(new IntRleV2Decoder(cursor(0x5e, 0x03, 0x5c), false), 4)).toThrow(OrcError);
  });
});

const dir = sharedFixturesDir('orc', 'ORC reader tests (orc-reader.test.ts)');

/** A source that counts its reads and bytes. */
function countingSource(bytes: Uint8Array): OrcSource & { reads: number; bytesRead: number } {
  const inner = bytesSource(bytes);
  const source = {
    byteLength: inner.byteLength,
    reads: 0,
    bytesRead: 0,
    read: (offset: number, length: number) => {
      source.reads++;
      source.bytesRead += length;
      return inner.read(offset, length);
    },
  };
  return source;
}

async function columnValues(reader: OrcReader, column: string, options: Parameters<OrcReader['readBatches']>[0] = {}): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of reader.readBatches({ ...options, columns: [column] })) {
    expect(batch.schema.fields.map((f) => f.name)).toEqual([column]);
    out.push(...batch.getChildAt(0)!.toArray());
  }
  return out;
}

describe.skipIf(!dir)('reading ORC files', () => {
  const file = (name: string) => readFileSync(join(dir!, name));

  it('a one-column read fetches only that column’s streams, with few ranged reads', async () => {
    const bytes = file('TestOrcFile.testSeek.orc');
    const all = await OrcReader.open(bytesSource(bytes), 'testSeek');
    const expected: number[] = [];
    for await (const batch of all.readBatches()) expected.push(...(batch.getChild('int1')!.toArray() as Int32Array));
    const source = countingSource(bytes);
    const reader = await OrcReader.open(source, 'testSeek');
    const values = await columnValues(reader, 'int1');
    expect(values).toEqual(expected);
    expect(values.length).toBe(32768);
    // The tail, then per stripe its footer and one coalesced read of the int1 streams.
    expect(source.reads).toBeLessThanOrEqual(1 + 2 * reader.stripes.length);
    expect(source.bytesRead).toBeLessThan(bytes.length / 5);
  });

  it('skips stripes whose statistics exclude the predicate', async () => {
    const reader = await OrcReader.open(bytesSource(file('TestOrcFile.testStripeLevelStats.orc')), 'stripeStats');
    const values = await columnValues(reader, 'int1', { predicate: { op: 'eq', column: 'int1', value: 2 } });
    expect(values.length).toBe(5000);
    expect(new Set(values)).toEqual(new Set([2]));
    expect(reader.stats).toMatchObject({ stripesRead: 1, stripesSkipped: 2 });
  });

  it('skips row groups whose index statistics exclude the predicate', async () => {
    const reader = await OrcReader.open(bytesSource(file('TestOrcFile.testPredicatePushdown.orc')), 'pushdown');
    // int1 = 300 * row; row groups hold 1000 rows each.
    const values = (await columnValues(reader, 'int1', { predicate: { op: 'ge', column: 'int1', value: 600000 } })) as number[];
    expect(values.length).toBe(1500);
    expect(values[0]).toBe(600000);
    expect(values.every((v) => v >= 600000)).toBe(true);
    expect(reader.stats).toMatchObject({ stripesRead: 1, rowGroupsSkipped: 2, seeks: 1 });
    const none = await OrcReader.open(bytesSource(file('TestOrcFile.testPredicatePushdown.orc')), 'pushdown');
    expect(await columnValues(none, 'int1', { predicate: { op: 'lt', column: 'int1', value: 0 } })).toEqual([]);
    const strings = await OrcReader.open(bytesSource(file('TestOrcFile.testPredicatePushdown.orc')), 'pushdown');
    const matched = await columnValues(strings, 'string1', { predicate: { op: 'in', column: 'string1', values: ['zzz'] } });
    expect(matched).toEqual([]);
  });

  it('decoded values agree with the footer statistics of files without expected rows', async () => {
    for (const name of ['TestVectorOrcFile.testZstd.0.12.orc', 'decimal64_v2.orc', 'decimal64_v2_cplusplus.orc', 'demo-12-zlib.orc']) {
      const reader = await OrcReader.open(bytesSource(file(name)), name);
      for (const [column, node] of reader.topLevel()) {
        const stats = reader.tail.footer.statistics[node.id]!;
        let min: bigint | null = null;
        let max: bigint | null = null;
        let count = 0;
        for await (const batch of reader.readBatches({ columns: [column] })) {
          const data = batch.data.children[0]!;
          for (let i = 0; i < data.length; i++) {
            if (!data.getValid(i)) continue;
            count++;
            let v: bigint;
            if (arrow.DataType.isDecimal(data.type)) {
              const w = data.values as Uint32Array;
              v = BigInt.asIntN(
                128,
                (BigInt(w[i * 4 + 3]!) << 96n) | (BigInt(w[i * 4 + 2]!) << 64n) | (BigInt(w[i * 4 + 1]!) << 32n) | BigInt(w[i * 4]!),
              );
            } else if (arrow.DataType.isInt(data.type)) v = BigInt(data.values[i] as number | bigint);
            else continue;
            if (min === null || v < min) min = v;
            if (max === null || v > max) max = v;
          }
        }
        expect(count, `${name} ${column}`).toBe(stats.numberOfValues);
        if (stats.intMin !== undefined) expect([min, max], `${name} ${column}`).toEqual([stats.intMin, stats.intMax]);
        if (stats.decimalMin !== undefined) {
          const scale = (reader.schema.fields.find((f) => f.name === column)!.type as arrow.Decimal).scale;
          const unscaled = (s: string) =>
            BigInt(s.replace('.', '').padEnd(s.replace('.', '').length + scale - (s.split('.')[1]?.length ?? 0), '0'));
          // Statistics are bounds; the pre-2.0 decimal64 writer records some minimums as 0.
          expect(max, `${name} ${column}`).toBe(unscaled(stats.decimalMax!));
          expect(min! >= unscaled(stats.decimalMin), `${name} ${column}`).toBe(true);
        }
      }
    }
  });

  it('files without expected rows: empty and future-version files are refused, the others read every row', async () => {
    await expect(OrcReader.open(bytesSource(file('zero.orc')), 'zero.orc')).rejects.toThrow(/zero\.orc: the file is empty/);
    await expect(OrcReader.open(bytesSource(file('version1999.orc')), 'version1999.orc')).rejects.toThrow(UnsupportedOrcFeatureError);
    await expect(OrcReader.open(bytesSource(file('version1999.orc')), 'version1999.orc')).rejects.toThrow(/version 19\.99/);
    const names = [
      'orc_no_format.orc',
      'TestOrcFile.testWithoutCompressionBlockSize.orc',
      'bad_bloom_filter_1.6.0.orc',
      'bad_bloom_filter_1.6.11.orc',
      'complextypes_iceberg.orc',
      'TestOrcFile.testSargSkipPickupGroupWithoutIndexJava.orc',
      'TestOrcFile.testSargSkipPickupGroupWithoutIndexCPlusPlus.orc',
    ];
    for (const name of names) {
      const reader = await OrcReader.open(bytesSource(file(name)), name);
      let rows = 0;
      for await (const batch of reader.readBatches()) rows += batch.numRows;
      expect(rows, name).toBe(reader.numberOfRows);
      expect(rows, name).toBeGreaterThan(0);
    }
  });

  it('an unknown column is named in the error', async () => {
    const reader = await OrcReader.open(bytesSource(file('TestOrcFile.test1.orc')), 'test1');
    await expect(columnValues(reader, 'nope')).rejects.toThrow(/no column 'nope'.*boolean1/);
  });

  it('truncated and garbage files fail with CorruptOrcFileError naming the file', async () => {
    const bytes = file('TestOrcFile.test1.orc');
    for (const cut of [1, 3, 10, bytes.length - 1, bytes.length - 300]) {
      const err = await (async () => {
        const reader = await OrcReader.open(bytesSource(bytes.subarray(0, cut)), `cut-${cut}.orc`);
        for await (const _ of reader.readBatches()) void _;
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `cut at ${cut}`).toBeInstanceOf(OrcError);
      expect((err as Error).message).toContain(`cut-${cut}.orc`);
    }
    await expect(OrcReader.open(bytesSource(Buffer.from('Obj\x01 not an orc file at all')), 'avro.orc')).rejects.toThrow(
      CorruptOrcFileError,
    );
  });
});

describe.skipIf(!dir)('seeking to row groups', () => {
  // Files with several row groups per stripe, covering compressed and uncompressed streams, nested
  // types, dictionary and direct strings, timestamps, dates, booleans and nulls.
  const files = [
    'TestOrcFile.testSeek.orc',
    'TestStringDictionary.testRowIndex.orc',
    'orc_index_int_string.orc',
    'nulls-at-end-snappy.orc',
    'TestOrcFile.testPredicatePushdown.orc',
    'TestOrcFile.testDate1900.orc',
  ];
  const pick = (stripe: number, group: number) => (stripe + group) % 3 === 1;

  for (const name of files) {
    it(`${name}: reading every third row group gives exactly those rows of a full read`, async () => {
      const bytes = readFileSync(join(dir!, name));
      const full = await OrcReader.open(bytesSource(bytes), name);
      const stride = full.tail.footer.rowIndexStride;
      expect(stride).toBeGreaterThan(0);
      const expected: unknown[] = [];
      let stripe = 0;
      for await (const batch of full.readBatches()) {
        // One batch per stripe by default.
        for (let i = 0; i < batch.numRows; i++) {
          if (pick(stripe, Math.floor(i / stride))) expected.push(batch.get(i)!.toJSON());
        }
        stripe++;
      }
      const source = countingSource(bytes);
      const reader = await OrcReader.open(source, name);
      const actual: unknown[] = [];
      for await (const batch of reader.readBatches({ selectRowGroup: pick })) {
        for (let i = 0; i < batch.numRows; i++) actual.push(batch.get(i)!.toJSON());
      }
      expect(actual.length).toBe(expected.length);
      expect(actual.length).toBeGreaterThan(0);
      expect(reader.stats.seeks).toBeGreaterThan(0);
      const text = (v: unknown) =>
        JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? [...x] : x));
      for (let i = 0; i < expected.length; i++) {
        if (text(actual[i]) !== text(expected[i]))
          expect.fail(`${name} row ${i}: ${text(actual[i]).slice(0, 300)} != ${text(expected[i]).slice(0, 300)}`);
      }
    });
  }
});
