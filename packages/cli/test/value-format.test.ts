import { describe, expect, it } from 'vitest';
import {
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  TimeMillisecond,
  Timestamp,
  TimeUnit,
  Utf8,
} from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import { createRowFormatter, createValueFormatter, stringifyJson } from '../src/output/value-format.js';
import type { JsonValue, PaimonTypeHint } from '../src/output/value-format.js';

/** Validity bitmap with bit i set when valid[i]. */
function bitmap(valid: readonly boolean[]): Uint8Array {
  const out = new Uint8Array(Math.ceil(valid.length / 8) + 8);
  valid.forEach((v, i) => {
    if (v) out[i >> 3]! |= 1 << (i & 7);
  });
  return out;
}

function formatAll(field: Field, data: Data, hint?: PaimonTypeHint): JsonValue[] {
  const fmt = createValueFormatter(field, hint);
  return Array.from({ length: data.length }, (_, i) => fmt(data, i));
}

function column<T extends DataType>(
  type: T,
  data: ArrayLike<unknown>,
  valid?: boolean[],
  metadata?: Map<string, string>,
): [Field, Data<T>] {
  const field = new Field('c', type, true, metadata);
  const d = makeData({
    type,
    data: data as never,
    length: data.length,
    ...(valid ? { nullBitmap: bitmap(valid) } : {}),
  } as never) as Data<T>;
  return [field, d];
}

/** 128-bit little-endian two's-complement words, written out by hand. */
const words = (...w: number[]) => Uint32Array.from(w);

describe('BIGINT', () => {
  it('is a number within ±(2^53-1) and a string outside', () => {
    const [f, d] = column(
      new Int64(),
      BigInt64Array.from([
        9007199254740991n,
        -9007199254740991n,
        9007199254740992n,
        -9007199254740992n,
        -9223372036854775808n,
        9223372036854775807n,
        0n,
      ]),
    );
    expect(formatAll(f, d)).toEqual([
      9007199254740991,
      -9007199254740991,
      '9007199254740992',
      '-9007199254740992',
      '-9223372036854775808',
      '9223372036854775807',
      0,
    ]);
  });
  it('null is null', () => {
    const [f, d] = column(new Int64(), BigInt64Array.from([1n, 2n]), [true, false]);
    expect(formatAll(f, d)).toEqual([1, null]);
  });
});

describe('INT and BOOLEAN', () => {
  it('ints are numbers', () => {
    const [f, d] = column(new Int32(), Int32Array.from([-2147483648, 0, 2147483647]));
    expect(formatAll(f, d)).toEqual([-2147483648, 0, 2147483647]);
  });
  it('booleans read the right bits, also in a slice', () => {
    const type = new Bool();
    const data = makeData({ type, data: Uint8Array.from([0b00000101]), length: 4 });
    const f = new Field('b', type, true);
    expect(formatAll(f, data)).toEqual([true, false, true, false]);
    expect(formatAll(f, data.slice(2, 2))).toEqual([true, false]);
  });
});

describe('DECIMAL', () => {
  const type = new Decimal(2, 10, 128);
  it('prints exactly `scale` fraction digits from the unscaled value, negatives and |x| < 1 included', () => {
    const data = makeData({
      type,
      length: 6,
      data: words(
        12345,
        0,
        0,
        0, // 123.45
        0xfffffffb,
        0xffffffff,
        0xffffffff,
        0xffffffff, // -5 → -0.05
        5,
        0,
        0,
        0, // 0.05
        0,
        0,
        0,
        0, // 0.00
        0xffffff9c,
        0xffffffff,
        0xffffffff,
        0xffffffff, // -100 → -1.00
        1,
        0,
        1,
        0, // 2^64 + 1
      ),
    });
    expect(formatAll(new Field('d', type, true), data)).toEqual(['123.45', '-0.05', '0.05', '0.00', '-1.00', '184467440737095516.17']);
  });
  it('is exact at 38 digits, positive and negative', () => {
    const t = new Decimal(2, 38, 128);
    const data = makeData({
      type: t,
      data: words(0xffffffff, 0x098a223f, 0x5a86c47a, 0x4b3b4ca8, 0x00000001, 0xf675ddc0, 0xa5793b85, 0xb4c4b357),
      length: 2,
    });
    expect(formatAll(new Field('d', t, true), data)).toEqual([
      '999999999999999999999999999999999999.99',
      '-999999999999999999999999999999999999.99',
    ]);
  });
  it('scale 0 prints no point; scale 5 pads; nulls and slices work', () => {
    const t0 = new Decimal(0, 10, 128);
    expect(
      formatAll(new Field('d', t0), makeData({ type: t0, data: words(0xfffffff9, 0xffffffff, 0xffffffff, 0xffffffff), length: 1 })),
    ).toEqual(['-7']);
    const t5 = new Decimal(5, 23, 128);
    const data = makeData({
      type: t5,
      data: words(7, 0, 0, 0, 1, 0, 0, 0, 123456, 0, 0, 0),
      length: 3,
      nullBitmap: bitmap([true, false, true]),
    });
    expect(formatAll(new Field('d', t5), data)).toEqual(['0.00007', null, '1.23456']);
    expect(formatAll(new Field('d', t5), data.slice(2, 1))).toEqual(['1.23456']);
  });
});

describe('FLOAT and DOUBLE', () => {
  it('are numbers; non-finite values are strings', () => {
    const [f, d] = column(new Float64(), Float64Array.from([1.5, -0.25, NaN, Infinity, -Infinity, 1e300]));
    expect(formatAll(f, d)).toEqual([1.5, -0.25, 'NaN', 'Infinity', '-Infinity', 1e300]);
  });
  it('FLOAT prints the shortest decimal of the float32', () => {
    const [f, d] = column(new Float32(), Float32Array.from([0.1, 3.4028234663852886e38, -1.17549435e-38, 16777217, NaN]));
    expect(formatAll(f, d)).toEqual([0.1, 3.4028235e38, -1.1754944e-38, 16777216, 'NaN']);
  });
});

describe('DATE', () => {
  it('prints YYYY-MM-DD, before 1970 too', () => {
    const [f, d] = column(new DateDay(), Int32Array.from([0, -1, 19723, 11016, -25567, -719528, -719529, 2932896, 2932897]));
    expect(formatAll(f, d)).toEqual([
      '1970-01-01',
      '1969-12-31',
      '2024-01-01',
      '2000-02-29',
      '1900-01-01',
      '0000-01-01',
      '-0001-12-31',
      '9999-12-31',
      '+10000-01-01',
    ]);
  });
});

describe('TIME', () => {
  it('prints HH:MM:SS.fff by default and p digits with a Paimon type', () => {
    const [f, d] = column(new TimeMillisecond(), Int32Array.from([45_296_789, 0, 86_399_999]));
    expect(formatAll(f, d)).toEqual(['12:34:56.789', '00:00:00.000', '23:59:59.999']);
    expect(formatAll(f, d, { root: 'TIME', precision: 0 })).toEqual(['12:34:56', '00:00:00', '23:59:59']);
    expect(formatAll(f, d, { root: 'TIME', precision: 2 })).toEqual(['12:34:56.78', '00:00:00.00', '23:59:59.99']);
  });
});

describe('TIMESTAMP', () => {
  const ms = new Timestamp(TimeUnit.MILLISECOND, null);
  const us = new Timestamp(TimeUnit.MICROSECOND, null);
  const ns = new Timestamp(TimeUnit.NANOSECOND, null);
  it('derives p from the unit when nothing else is known', () => {
    const [f, d] = column(ms, BigInt64Array.from([0n, 1_700_000_000_123n]));
    expect(formatAll(f, d)).toEqual(['1970-01-01T00:00:00.000', '2023-11-14T22:13:20.123']);
    const [fu, du] = column(us, BigInt64Array.from([1_700_000_000_123_456n]));
    expect(formatAll(fu, du)).toEqual(['2023-11-14T22:13:20.123456']);
    const [fn, dn] = column(ns, BigInt64Array.from([1_700_000_000_123_456_789n]));
    expect(formatAll(fn, dn)).toEqual(['2023-11-14T22:13:20.123456789']);
  });
  it('is correct before 1970 (floor division)', () => {
    const [f, d] = column(ms, BigInt64Array.from([-1n, -1000n, -1001n, -86_400_000n, -2_208_988_800_000n]));
    expect(formatAll(f, d)).toEqual([
      '1969-12-31T23:59:59.999',
      '1969-12-31T23:59:59.000',
      '1969-12-31T23:59:58.999',
      '1969-12-31T00:00:00.000',
      '1900-01-01T00:00:00.000',
    ]);
    const [fn, dn] = column(ns, BigInt64Array.from([-1n]));
    expect(formatAll(fn, dn)).toEqual(['1969-12-31T23:59:59.999999999']);
  });
  it('prints exactly p digits from the Paimon type, whatever the unit', () => {
    const [f, d] = column(ms, BigInt64Array.from([1500n, -1500n]));
    expect(formatAll(f, d, { root: 'TIMESTAMP', precision: 0 })).toEqual(['1970-01-01T00:00:01', '1969-12-31T23:59:58']);
    expect(formatAll(f, d, { root: 'TIMESTAMP', precision: 9 })).toEqual([
      '1970-01-01T00:00:01.500000000',
      '1969-12-31T23:59:58.500000000',
    ]);
    const [fu, du] = column(us, BigInt64Array.from([123_400n]));
    expect(formatAll(fu, du, { root: 'TIMESTAMP', precision: 4 })).toEqual(['1970-01-01T00:00:00.1234']);
    // INT96 columns arrive as nanoseconds whatever p is.
    const [fn, dn] = column(ns, BigInt64Array.from([-1n, 1_000_000_000n]));
    expect(formatAll(fn, dn, { root: 'TIMESTAMP', precision: 3 })).toEqual(['1969-12-31T23:59:59.999', '1970-01-01T00:00:01.000']);
  });
  it('reads p from paimon.type field metadata', () => {
    const [f, d] = column(ns, BigInt64Array.from([1_000_000_000n]), undefined, new Map([['paimon.type', 'TIMESTAMP(3) NOT NULL']]));
    expect(formatAll(f, d)).toEqual(['1970-01-01T00:00:01.000']);
    const [f2, d2] = column(us, BigInt64Array.from([0n]), undefined, new Map([['paimon.type', 'TIMESTAMP(2) WITH LOCAL TIME ZONE']]));
    expect(formatAll(f2, d2)).toEqual(['1970-01-01T00:00:00.00Z']);
  });
  it('TIMESTAMP_LTZ ends with Z (from the Arrow timezone or the Paimon type)', () => {
    const ltz = new Timestamp(TimeUnit.MILLISECOND, 'UTC');
    const [f, d] = column(ltz, BigInt64Array.from([-1n]));
    expect(formatAll(f, d)).toEqual(['1969-12-31T23:59:59.999Z']);
    const [f2, d2] = column(us, BigInt64Array.from([1_700_000_000_000_000n]));
    expect(formatAll(f2, d2, { root: 'TIMESTAMP_LTZ', precision: 6 })).toEqual(['2023-11-14T22:13:20.000000Z']);
    expect(formatAll(f2, d2, { root: 'TIMESTAMP', precision: 0 })).toEqual(['2023-11-14T22:13:20']);
  });
});

describe('STRING and BYTES', () => {
  it('strings are decoded as UTF-8; bytes are base64', () => {
    const text = new TextEncoder().encode('héllo☃');
    const s = makeData({
      type: new Utf8(),
      data: text,
      valueOffsets: Int32Array.from([0, 3, 3, text.length]),
      length: 3,
      nullBitmap: bitmap([true, false, true]),
    });
    expect(formatAll(new Field('s', new Utf8()), s)).toEqual(['hé', null, 'llo☃']);
    const b = makeData({
      type: new Binary(),
      data: Uint8Array.from([0, 1, 2, 255, 104, 105]),
      valueOffsets: Int32Array.from([0, 4, 4, 6]),
      length: 3,
    });
    expect(formatAll(new Field('b', new Binary()), b)).toEqual(['AAEC/w==', '', 'aGk=']);
  });
});

describe('ARRAY, MAP, ROW', () => {
  it('ARRAY is a JSON array with null elements and null arrays', () => {
    const child = new Field('element', new Int32(), true);
    const type = new List(child);
    const values = makeData({
      type: new Int32(),
      data: Int32Array.from([1, 2, 0, 4]),
      length: 4,
      nullBitmap: bitmap([true, true, false, true]),
    });
    const data = makeData({
      type,
      valueOffsets: Int32Array.from([0, 3, 3, 3, 4]),
      child: values,
      length: 4,
      nullBitmap: bitmap([true, true, false, true]),
    });
    expect(formatAll(new Field('a', type), data)).toEqual([[1, 2, null], [], null, [4]]);
  });

  function mapData(keyType: DataType, keys: Data, values: Data, offsets: number[]) {
    const entries = new Struct([new Field('key', keyType, false), new Field('value', values.type, true)]);
    const type = new Map_(new Field('entries', entries, false));
    const entryData = makeData({ type: entries, length: keys.length, children: [keys, values] });
    return { type, data: makeData({ type, valueOffsets: Int32Array.from(offsets), child: entryData, length: offsets.length - 1 }) };
  }

  it('MAP with string keys is an object in entry order', () => {
    const text = new TextEncoder().encode('b1a');
    const keys = makeData({ type: new Utf8(), data: text, valueOffsets: Int32Array.from([0, 1, 2, 3]), length: 3 });
    const values = makeData({
      type: new Int64(),
      data: BigInt64Array.from([1n, 2n, 3n]),
      length: 3,
      nullBitmap: bitmap([true, false, true]),
    });
    const { type, data } = mapData(new Utf8(), keys, values, [0, 2, 3]);
    const out = formatAll(new Field('m', type), data);
    expect(out.map((v) => stringifyJson(v))).toEqual(['{"b":1,"1":null}', '{"a":3}']);
  });

  it('MAP with non-string keys is an array of [key, value] pairs', () => {
    const keys = makeData({ type: new Int32(), data: Int32Array.from([7, 8]), length: 2 });
    const values = makeData({ type: new Float64(), data: Float64Array.from([0.5, NaN]), length: 2 });
    const { type, data } = mapData(new Int32(), keys, values, [0, 2, 2]);
    expect(formatAll(new Field('m', type), data)).toEqual([
      [
        [7, 0.5],
        [8, 'NaN'],
      ],
      [],
    ]);
  });

  it('ROW is an object with fields in declaration order (integer-like names too)', () => {
    const fields = [new Field('2', new Int32(), true), new Field('1', new Utf8(), true)];
    const type = new Struct(fields);
    const a = makeData({ type: new Int32(), data: Int32Array.from([10, 20]), length: 2, nullBitmap: bitmap([false, true]) });
    const text = new TextEncoder().encode('xy');
    const b = makeData({ type: new Utf8(), data: text, valueOffsets: Int32Array.from([0, 1, 2]), length: 2 });
    const data = makeData({ type, children: [a, b], length: 2 });
    const out = formatAll(new Field('r', type), data);
    expect(out.map((v) => stringifyJson(v))).toEqual(['{"2":null,"1":"x"}', '{"2":20,"1":"y"}']);
  });

  it('nested Paimon types reach nested timestamps', () => {
    const ts = new Timestamp(TimeUnit.MICROSECOND, null);
    const type = new List(new Field('element', ts, true));
    const values = makeData({ type: ts, data: BigInt64Array.from([1_500_000n]), length: 1 });
    const data = makeData({ type, valueOffsets: Int32Array.from([0, 1]), child: values, length: 1 });
    expect(formatAll(new Field('a', type), data, { root: 'ARRAY', element: { root: 'TIMESTAMP', precision: 1 } })).toEqual([
      ['1970-01-01T00:00:01.5'],
    ]);
  });
});

describe('rows as JSON lines', () => {
  it('one object per row, keys in schema order, values per the rules', () => {
    const schema = new Schema([
      new Field('z', new Int64(), true),
      new Field('10', new Utf8(), true),
      new Field('amount', new Decimal(2, 10, 128), true),
      new Field('ts', new Timestamp(TimeUnit.MICROSECOND, null), true),
    ]);
    const text = new TextEncoder().encode('a"b');
    const children = [
      makeData({ type: new Int64(), data: BigInt64Array.from([2n ** 60n, 5n]), length: 2 }),
      makeData({ type: new Utf8(), data: text, valueOffsets: Int32Array.from([0, 3, 3]), length: 2, nullBitmap: bitmap([true, false]) }),
      makeData({ type: new Decimal(2, 10, 128), data: words(0xfffffffb, 0xffffffff, 0xffffffff, 0xffffffff, 100, 0, 0, 0), length: 2 }),
      makeData({ type: new Timestamp(TimeUnit.MICROSECOND, null), data: BigInt64Array.from([-1n, 0n]), length: 2 }),
    ];
    const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), children, length: 2 }));
    const rows = createRowFormatter(schema, [undefined, undefined, undefined, { root: 'TIMESTAMP', precision: 3 }]);
    expect(rows.columns).toEqual(['z', '10', 'amount', 'ts']);
    expect(rows.formatJsonLine(batch, 0)).toBe('{"z":"1152921504606846976","10":"a\\"b","amount":"-0.05","ts":"1969-12-31T23:59:59.999"}');
    expect(rows.formatJsonLine(batch, 1)).toBe('{"z":5,"10":null,"amount":"1.00","ts":"1970-01-01T00:00:00.000"}');
    expect(JSON.parse(rows.formatJsonLine(batch, 1))).toEqual({ z: 5, '10': null, amount: '1.00', ts: '1970-01-01T00:00:00.000' });
  });
});
