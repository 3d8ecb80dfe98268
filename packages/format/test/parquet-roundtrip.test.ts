import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import {
  conformToPaimonTypes,
  CorruptFileError,
  readParquetFile,
  readParquetFooter,
  toArrowSchema,
  utf8Vector,
  writeParquetFile,
} from '../src/index.js';
import type { DataField, DataType } from '../src/types.js';
import type { FileIO } from '@tidemark/storage';
import { CountingFileIO } from './helpers/counting-file-io.js';

const t = (root: string, extra: Record<string, unknown> = {}, nullable = true): DataType =>
  ({ root, nullable, ...extra }) as unknown as DataType;

const DEC38_MAX = 10n ** 38n - 1n;

/** Fields of every Paimon type; ids deliberately not contiguous. */
const FIELDS: DataField[] = [
  { id: 0, name: 'b', type: t('BOOLEAN') },
  { id: 1, name: 'i8', type: t('TINYINT') },
  { id: 2, name: 'i16', type: t('SMALLINT') },
  { id: 3, name: 'i32', type: t('INT', {}, false) },
  { id: 4, name: 'i64', type: t('BIGINT') },
  { id: 5, name: 'f32', type: t('FLOAT') },
  { id: 6, name: 'f64', type: t('DOUBLE') },
  { id: 7, name: 'd9', type: t('DECIMAL', { precision: 9, scale: 2 }) },
  { id: 8, name: 'd18', type: t('DECIMAL', { precision: 18, scale: 4 }) },
  { id: 9, name: 'd38', type: t('DECIMAL', { precision: 38, scale: 10 }) },
  { id: 10, name: 's', type: t('VARCHAR', { length: 2147483647 }) },
  { id: 11, name: 'bin', type: t('VARBINARY', { length: 2147483647 }) },
  { id: 12, name: 'dt', type: t('DATE') },
  { id: 13, name: 'tm', type: t('TIME', { precision: 0 }) },
  { id: 14, name: 'ts3', type: t('TIMESTAMP', { precision: 3 }) },
  { id: 15, name: 'ts6', type: t('TIMESTAMP', { precision: 6 }) },
  { id: 16, name: 'ts9', type: t('TIMESTAMP', { precision: 9 }) },
  { id: 17, name: 'ltz6', type: t('TIMESTAMP_LTZ', { precision: 6 }) },
  { id: 18, name: 'arr', type: t('ARRAY', { element: t('INT') }) },
  { id: 19, name: 'mp', type: t('MAP', { key: t('VARCHAR', { length: 2147483647 }, false), value: t('BIGINT') }) },
  {
    id: 20,
    name: 'row',
    type: t('ROW', {
      fields: [
        { id: 21, name: 'x', type: t('INT') },
        { id: 22, name: 'y', type: t('ARRAY', { element: t('VARCHAR', { length: 10 }) }) },
      ],
    }),
  },
];

const N = 5; // rows: 0 = typical, 1 = max extremes, 2 = min extremes / pre-1970, 3 = nulls, 4 = zeros
const valid = (i: number) => i !== 3;

function fixed(type: arrow.DataType, values: ArrayBufferView, nullable = true): arrow.Data {
  const bitmap = new Uint8Array(1);
  for (let i = 0; i < N; i++) if (!nullable || valid(i)) bitmap[0]! |= 1 << i;
  return arrow.makeData({
    type,
    length: N,
    nullCount: nullable ? 1 : 0,
    nullBitmap: nullable ? bitmap : new Uint8Array(0),
    data: values,
  } as never);
}

function decimalWords(values: bigint[]): Uint32Array {
  const out = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
    let x = BigInt.asUintN(128, v);
    for (let w = 0; w < 4; w++) {
      out[i * 4 + w] = Number(x & 0xffffffffn);
      x >>= 32n;
    }
  });
  return out;
}

function decimalsOf(data: arrow.Data): bigint[] {
  const words = data.values as Uint32Array;
  const out: bigint[] = [];
  for (let i = 0; i < data.length; i++) {
    let x = 0n;
    for (let w = 3; w >= 0; w--) x = (x << 32n) | BigInt(words[(data.offset + i) * 4 + w]!);
    out.push(BigInt.asIntN(128, x));
  }
  return out;
}

const EXPECT = {
  b: [true, true, false, null, false],
  i8: [1, 127, -128, null, 0],
  i16: [2, 32767, -32768, null, 0],
  i32: [3, 2147483647, -2147483648, 7, 0],
  i64: [4n, 9223372036854775807n, -9223372036854775808n, null, 0n],
  f32: [1.5, 3.4028234663852886e38, -3.4028234663852886e38, null, 0],
  f64: [2.25, Number.MAX_VALUE, -Number.MAX_VALUE, null, 0],
  d9: [12345n, 999999999n, -999999999n, null, 0n],
  d18: [1n, 10n ** 18n - 1n, -(10n ** 18n - 1n), null, 0n],
  d38: [12345678901234567890123456789n, DEC38_MAX, -DEC38_MAX, null, 0n],
  s: ['hello', 'ünïcødé ✓ 𝄞', '', null, 'x'.repeat(100)],
  dt: [19000, 2932896, -719162, null, 0], // 9999-12-31, 0001-01-01
  tm: [1000, 86399999, 0, null, 0],
  ts3: [1700000000123n, 253402300799999n, -62135596800000n, null, -1n],
  ts6: [1700000000123456n, 253402300799999999n, -62135596800000000n, null, -1n],
  ts9: [1700000000123456789n, 9223372036854775807n, -9223372036854775807n, null, -1n],
  ltz6: [1n, 2n, -86400000001n, null, 0n],
};

function buildTable(): arrow.Table {
  const schema = toArrowSchema(FIELDS);
  const f = (name: string) => schema.fields.find((x) => x.name === name)!.type;
  const bitmapFor = (vals: unknown[]) => vals.map((v) => v !== null);
  const bools = new Uint8Array(1);
  EXPECT.b.forEach((v, i) => {
    if (v) bools[0]! |= 1 << i;
  });
  const num = <A extends ArrayBufferView>(C: { from(x: Iterable<number>): A }, vals: (number | null)[]) => C.from(vals.map((v) => v ?? 0));
  const big = (vals: (bigint | null)[]) => BigInt64Array.from(vals.map((v) => v ?? 0n));
  void bitmapFor;
  const columns: Record<string, arrow.Data> = {
    b: fixed(f('b'), bools),
    i8: fixed(f('i8'), num(Int8Array, EXPECT.i8)),
    i16: fixed(f('i16'), num(Int16Array, EXPECT.i16)),
    i32: fixed(f('i32'), num(Int32Array, EXPECT.i32), false),
    i64: fixed(f('i64'), big(EXPECT.i64)),
    f32: fixed(f('f32'), num(Float32Array, EXPECT.f32)),
    f64: fixed(f('f64'), num(Float64Array, EXPECT.f64)),
    d9: fixed(f('d9'), decimalWords(EXPECT.d9.map((v) => v ?? 0n))),
    d18: fixed(f('d18'), decimalWords(EXPECT.d18.map((v) => v ?? 0n))),
    d38: fixed(f('d38'), decimalWords(EXPECT.d38.map((v) => v ?? 0n))),
    s: utf8Vector(EXPECT.s).data[0]!,
    bin: arrow.vectorFromArray(
      [new Uint8Array([0, 255]), new Uint8Array(300).fill(7), new Uint8Array(0), null, new Uint8Array([1])],
      new arrow.Binary(),
    ).data[0]!,
    dt: fixed(f('dt'), num(Int32Array, EXPECT.dt)),
    tm: fixed(f('tm'), num(Int32Array, EXPECT.tm)),
    ts3: fixed(f('ts3'), big(EXPECT.ts3)),
    ts6: fixed(f('ts6'), big(EXPECT.ts6)),
    ts9: fixed(f('ts9'), big(EXPECT.ts9)),
    ltz6: fixed(f('ltz6'), big(EXPECT.ltz6)),
    arr: arrow.vectorFromArray([[1, 2], [], [null, -5], null, [2147483647]], f('arr')).data[0]!,
    mp: arrow.vectorFromArray(
      [
        new Map([
          ['a', 1n],
          ['b', null],
        ]),
        new Map(),
        new Map([['z', -9223372036854775808n]]),
        null,
        new Map([['k', 0n]]),
      ],
      f('mp'),
    ).data[0]!,
    row: arrow.vectorFromArray([{ x: 1, y: ['p', null] }, { x: null, y: [] }, { x: -1, y: null }, null, { x: 0, y: ['q'] }], f('row'))
      .data[0]!,
  };
  const children = schema.fields.map((field) => columns[field.name]!);
  return new arrow.Table(schema, [
    new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: N, nullCount: 0, children })),
  ]);
}

async function readAll(io: CountingFileIO, path: string, columns?: string[]): Promise<arrow.Table> {
  const batches: arrow.RecordBatch[] = [];
  for await (const b of readParquetFile(io.asFileIO(), path, columns ? { columns } : {})) {
    batches.push(conformToPaimonTypes(b, FIELDS));
  }
  return new arrow.Table(batches);
}

const plain = (v: unknown): unknown => {
  if (v === null || v === undefined) return null;
  if (v instanceof Uint8Array) return [...v];
  if (typeof v === 'object' && v && 'toJSON' in v) return plain((v as { toJSON(): unknown }).toJSON());
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return [...v].map(([k, x]) => [plain(k), plain(x)]);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, plain(x)]));
  return v;
};

describe('Parquet write → read round trip of every Paimon type', () => {
  const table = buildTable();
  const file = writeParquetFile(table, { compression: 'zstd' });
  const io = new CountingFileIO().put('mem/all.parquet', file);

  it('keeps the shared Arrow types, field ids and nullability', async () => {
    const back = await readAll(io, 'mem/all.parquet');
    expect(back.numRows).toBe(N);
    const expected = toArrowSchema(FIELDS);
    back.schema.fields.forEach((field, i) => {
      const want = expected.fields[i]!;
      expect(field.name).toBe(want.name);
      expect(String(field.type)).toBe(String(want.type));
      expect(arrow.util.compareTypes(field.type, want.type)).toBe(true);
      expect(field.nullable).toBe(want.nullable);
      expect(field.metadata.get('PARQUET:field_id')).toBe(String(FIELDS[i]!.id));
    });
  });

  it('keeps every value, including nulls and extremes', async () => {
    const back = await readAll(io, 'mem/all.parquet');
    const col = (name: string) => back.getChild(name)!;
    const raw = (name: string) => {
      const v = col(name);
      const data = v.data[0]!;
      return [...Array(N).keys()].map((i) => (v.isValid(i) ? (data.values as ArrayLike<unknown>)[data.offset + i] : null));
    };
    expect(raw('i8')).toEqual(EXPECT.i8);
    expect(raw('i16')).toEqual(EXPECT.i16);
    expect(raw('i32')).toEqual(EXPECT.i32);
    expect(raw('i64')).toEqual(EXPECT.i64);
    expect(raw('f32')).toEqual(EXPECT.f32);
    expect(raw('f64')).toEqual(EXPECT.f64);
    expect(raw('dt')).toEqual(EXPECT.dt);
    expect(raw('tm')).toEqual(EXPECT.tm);
    for (const name of ['ts3', 'ts6', 'ts9', 'ltz6'] as const) expect(raw(name)).toEqual(EXPECT[name]);
    expect([...col('b')].map((v) => v)).toEqual(EXPECT.b);
    expect([...col('s')]).toEqual(EXPECT.s);
    for (const name of ['d9', 'd18', 'd38'] as const) {
      const got = decimalsOf(col(name).data[0]!).map((v, i) => (col(name).isValid(i) ? v : null));
      expect(got).toEqual(EXPECT[name]);
    }
    expect(plain([...col('bin')])).toEqual([[0, 255], Array(300).fill(7), [], null, [1]]);
    expect(plain([...col('arr')])).toEqual([[1, 2], [], [null, -5], null, [2147483647]]);
    expect(plain([...col('row')])).toEqual([{ x: 1, y: ['p', null] }, { x: null, y: [] }, { x: -1, y: null }, null, { x: 0, y: ['q'] }]);
    const maps = [...col('mp')].map((m) => (m === null ? null : Object.entries((m as { toJSON(): object }).toJSON())));
    expect(maps).toEqual([
      [
        ['a', 1n],
        ['b', null],
      ],
      [],
      [['z', -9223372036854775808n]],
      null,
      [['k', 0n]],
    ]);
  });

  it('reads only the projected columns', async () => {
    const back = await readAll(io, 'mem/all.parquet', ['d38', 's']);
    expect(back.schema.fields.map((f) => f.name)).toEqual(['d38', 's']);
    expect(decimalsOf(back.getChild('d38')!.data[0]!)[1]).toBe(DEC38_MAX);
  });

  it('writes exact statistics and field ids into the footer', async () => {
    const footer = await readParquetFooter(io.asFileIO(), 'mem/all.parquet');
    expect(footer.numRows).toBe(BigInt(N));
    expect(footer.topLevelFieldIds.get('d38')).toBe(9);
    expect(footer.topLevelFieldIds.get('row')).toBe(20);
    const stats = (path: string) => footer.rowGroups[0]!.columns.find((c) => c.column.path.join('.') === path)!;
    expect(stats('d38').min).toBe(-DEC38_MAX);
    expect(stats('d38').max).toBe(DEC38_MAX);
    expect(stats('d38').nullCount).toBe(1n);
    expect(stats('d9').max).toBe(999999999n);
    expect(stats('i64').min).toBe(-9223372036854775808n);
    expect(stats('ts6').min).toBe(-62135596800000000n);
    expect(stats('i32').nullCount).toBe(0n);
    expect(stats('s').min).toBe('');
    expect(stats('row.x').column.fieldId).toBe(21);
  });

  it('never writes Timestamp[s]: seconds become milliseconds', async () => {
    const field = new arrow.Field('sec', new arrow.TimestampSecond(), true, new Map([['PARQUET:field_id', '1']]));
    const data = arrow.makeData({
      type: new arrow.TimestampSecond(),
      length: 2,
      nullCount: 0,
      data: BigInt64Array.from([-1n, 1700000000n]),
    });
    const schema = new arrow.Schema([field]);
    const bytes = writeParquetFile([
      new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct([field]), length: 2, nullCount: 0, children: [data] })),
    ]);
    const sio = new CountingFileIO().put('sec', bytes);
    const batches: arrow.RecordBatch[] = [];
    for await (const b of readParquetFile(sio.asFileIO(), 'sec')) batches.push(b);
    const col = batches[0]!.getChildAt(0)!;
    expect((col.type as arrow.Timestamp).unit).toBe(arrow.TimeUnit.MILLISECOND);
    expect([...(col.data[0]!.values as BigInt64Array)]).toEqual([-1000n, 1700000000000n]);
  });

  it('survives two columns sharing one typed array (arrow-js IPC bug)', async () => {
    const shared = Int32Array.from([1, 2, 3]);
    const fields = [new arrow.Field('a', new arrow.Int32(), false), new arrow.Field('b', new arrow.Int32(), false)];
    const children = fields.map((f) => arrow.makeData({ type: f.type, length: 3, nullCount: 0, data: shared }));
    const schema = new arrow.Schema(fields);
    const bytes = writeParquetFile([
      new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: 3, nullCount: 0, children })),
    ]);
    const sio = new CountingFileIO().put('shared', bytes);
    const batches: arrow.RecordBatch[] = [];
    for await (const b of readParquetFile(sio.asFileIO(), 'shared')) batches.push(b);
    expect([...batches[0]!.getChild('a')!]).toEqual([1, 2, 3]);
    expect([...batches[0]!.getChild('b')!]).toEqual([1, 2, 3]);
  });
});

describe('ranged reads and failures', () => {
  it('reads only the footer and the projected column chunks', async () => {
    const rows = 50_000;
    const fields = [
      new arrow.Field('id', new arrow.Int64(), false, new Map([['PARQUET:field_id', '1']])),
      new arrow.Field('name', new arrow.Utf8(), true, new Map([['PARQUET:field_id', '2']])),
      new arrow.Field('v', new arrow.Float64(), true, new Map([['PARQUET:field_id', '3']])),
    ];
    const children = [
      arrow.makeData({
        type: fields[0]!.type as arrow.Int64,
        length: rows,
        nullCount: 0,
        data: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i) * 7919n),
      }),
      utf8Vector(Array.from({ length: rows }, (_, i) => `name-${(i * 2654435761) % 1000003}`)).data[0]!,
      arrow.makeData({
        type: fields[2]!.type as arrow.Float64,
        length: rows,
        nullCount: 0,
        data: Float64Array.from({ length: rows }, (_, i) => Math.sin(i)),
      }),
    ];
    const schema = new arrow.Schema(fields);
    const bytes = writeParquetFile(
      [new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: rows, nullCount: 0, children }))],
      {
        compression: 'none',
        rowGroupSize: 25_000,
      },
    );
    const io = new CountingFileIO().put('big', bytes);
    let count = 0;
    let sum = 0;
    for await (const b of readParquetFile(io.asFileIO(), 'big', { columns: ['v'] })) {
      expect(b.schema.fields.map((f) => f.name)).toEqual(['v']);
      count += b.numRows;
      for (const x of b.getChild('v')!) sum += x as number;
    }
    expect(count).toBe(rows);
    let want = 0;
    for (let i = 0; i < rows; i++) want += Math.sin(i);
    expect(sum).toBeCloseTo(want, 6);
    expect(io.wholeReads).toBe(0);
    // 2 row groups × 1 projected chunk, plus a few footer/page-index reads.
    expect(io.rangeReads).toBeLessThanOrEqual(2 + 4);
    expect(io.bytesRead).toBeLessThan(bytes.length / 2);
  });

  it('reads a small file with one ranged read and no stat when its size is known', async () => {
    const bytes = writeParquetFile(buildTable());
    const io = new CountingFileIO().put('small.parquet', bytes);
    let stats = 0;
    const fileIO = new Proxy(io, {
      get: (target, key) => (key === 'stat' ? (...a: [string]) => (stats++, target.stat(...a)) : Reflect.get(target, key)),
    }) as unknown as FileIO;
    const rows: number[] = [];
    for await (const b of readParquetFile(fileIO, 'small.parquet', { fileSize: bytes.length })) rows.push(b.numRows);
    expect(rows.reduce((a, n) => a + n, 0)).toBe(buildTable().numRows);
    expect(io.rangeReads).toBe(1);
    expect(io.bytesRead).toBe(bytes.length);
    expect(stats).toBe(0);
    expect((await readAll(io, 'small.parquet')).numRows).toBe(buildTable().numRows);
  });

  it('raises CorruptFileError naming the file for truncated or garbage files', async () => {
    const good = writeParquetFile(buildTable());
    const io = new CountingFileIO()
      .put('dir/truncated.parquet', good.subarray(0, good.length - 20))
      .put('dir/garbage.parquet', new TextEncoder().encode('this is not a parquet file at all'))
      .put('dir/tiny.parquet', new TextEncoder().encode('PAR1'));
    // Not tested: a corrupt *data page* behind a valid footer makes parquet-wasm 0.8 panic
    // (RuntimeError: unreachable, uncaught) and the read promise never settles.
    for (const name of ['dir/truncated.parquet', 'dir/garbage.parquet', 'dir/tiny.parquet']) {
      const read = async () => {
        for await (const b of readParquetFile(io.asFileIO(), name)) void b;
      };
      await expect(read(), name).rejects.toBeInstanceOf(CorruptFileError);
      await expect(read(), name).rejects.toThrow(name);
    }
    await expect(readParquetFooter(io.asFileIO(), 'dir/truncated.parquet')).rejects.toBeInstanceOf(CorruptFileError);
    await expect(readParquetFooter(io.asFileIO(), 'dir/garbage.parquet')).rejects.toThrow('dir/garbage.parquet');
  });
});
