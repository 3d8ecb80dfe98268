import { describe, expect, it } from 'vitest';
import {
  bigIntToBytes,
  binaryRowBody,
  bytesToBigInt,
  decodeBinaryRow,
  deserializeBinaryRow,
  encodeBinaryRow,
  nullBitsSizeInBytes,
  serializeBinaryRow,
} from '../src/binary-row.js';
import { FormatError } from '../src/errors.js';
import { parseTypeString } from '../src/type-json.js';
import type { Value } from '../src/values.js';
import { hex, toHex } from './fixtures.js';

const T = (...s: string[]) => s.map(parseTypeString);

describe('BinaryRow worked examples (spec §5.3)', () => {
  const examples: Array<[string, string[], Value[], string]> = [
    ['INT 1, STRING "a"', ['INT', 'STRING'], [1, 'a'], '00000002 | 0000000000000000 | 0100000000000000 | 6100000000000081'],
    [
      'STRING "2024-01-01" (var part)',
      ['STRING'],
      ['2024-01-01'],
      '00000001 | 0000000000000000 | 0a00000010000000 | 323032342d30312d3031000000000000',
    ],
    ['INT 10 (Java _PARTITION)', ['INT NOT NULL'], [10], '00000001 0000000000000000 0a00000000000000'],
    [
      'STRING "Alice", INT 1 (Java _MIN_KEY)',
      ['STRING NOT NULL', 'INT NOT NULL'],
      ['Alice', 1],
      '00000002 0000000000000000 416c696365000085 0100000000000000',
    ],
    ['null INT', ['INT'], [null], '00000001 0001000000000000 0000000000000000'],
    ['INT 0, INT 1 (Java two-key partition)', ['INT', 'INT'], [0, 1], '00000002 0000000000000000 0000000000000000 0100000000000000'],
    ['empty row', [], [], '00000000 0000000000000000'],
  ];
  for (const [name, types, values, bytes] of examples) {
    it(name, () => {
      const ts = T(...types);
      expect(toHex(serializeBinaryRow(ts, values))).toBe(toHex(hex(bytes)));
      expect(deserializeBinaryRow(hex(bytes), ts)).toEqual(values);
    });
  }
});

describe('BinaryRow per-type encoding', () => {
  it('encodes fixed-width types little-endian in their slot', () => {
    const types = T('BOOLEAN', 'TINYINT', 'SMALLINT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DATE', 'TIME(0)');
    const values: Value[] = [true, -2, -300, -5n, 1.5, -2.25, 19723, 3_600_000];
    const row = encodeBinaryRow(types, values);
    expect(row.length).toBe(8 + 8 * 8);
    const slots = toHex(row.subarray(8)).match(/.{16}/g);
    expect(slots).toEqual([
      '0100000000000000',
      'fe00000000000000',
      'd4fe000000000000',
      'fbffffffffffffff',
      '0000c03f00000000',
      '00000000000002c0',
      '0b4d000000000000', // 19723 = 0x4D0B
      '80ee360000000000',
    ]);
    expect(decodeBinaryRow(row, types)).toEqual(values);
  });

  it('stores compact decimals as unscaled longs and wide decimals as big-endian bytes in the var part', () => {
    const types = T('DECIMAL(10, 2)', 'DECIMAL(38, 2)', 'DECIMAL(20, 0)');
    const values: Value[] = [
      { unscaled: -12345n, scale: 2 },
      { unscaled: 256n, scale: 2 },
      { unscaled: -1n, scale: 0 },
    ];
    const row = encodeBinaryRow(types, values);
    // header 8 + 3 slots 24 = 32; var part: 16 bytes for field 1 at 32, 16 bytes for field 2 at 48
    expect(row.length).toBe(64);
    expect(toHex(row.subarray(8, 16))).toBe('c7cfffffffffffff');
    expect(toHex(row.subarray(16, 24))).toBe('0200000020000000'); // len 2, offset 32
    expect(toHex(row.subarray(32, 48))).toBe('01000000000000000000000000000000');
    expect(toHex(row.subarray(24, 32))).toBe('0100000030000000'); // len 1, offset 48
    expect(toHex(row.subarray(48, 49))).toBe('ff');
    expect(decodeBinaryRow(row, types)).toEqual(values);
  });

  it('rescales decimals to the column scale and refuses lossy rescaling', () => {
    const types = T('DECIMAL(10, 2)');
    expect(decodeBinaryRow(encodeBinaryRow(types, [{ unscaled: 5n, scale: 0 }]), types)).toEqual([{ unscaled: 500n, scale: 2 }]);
    expect(() => encodeBinaryRow(types, [{ unscaled: 5n, scale: 3 }])).toThrow(FormatError);
  });

  it('stores TIMESTAMP p<=3 as millis and p>3 as millis in the var part with nanos in the slot', () => {
    const types = T('TIMESTAMP(3)', 'TIMESTAMP(9)', 'TIMESTAMP_LTZ(6)');
    const values: Value[] = [
      { millis: -1, nanoOfMillis: 0 },
      { millis: 1704103200123, nanoOfMillis: 456789 },
      { millis: 0, nanoOfMillis: 1000 },
    ];
    const row = encodeBinaryRow(types, values);
    expect(row.length).toBe(8 + 24 + 16);
    expect(toHex(row.subarray(8, 16))).toBe('ffffffffffffffff');
    expect(toHex(row.subarray(16, 24))).toBe('55f8060020000000'); // nanos 456789, offset 32
    expect(toHex(row.subarray(24, 32))).toBe('e803000028000000'); // nanos 1000, offset 40
    expect(new DataView(row.buffer).getBigInt64(32, true)).toBe(1704103200123n);
    expect(decodeBinaryRow(row, types)).toEqual(values);
  });

  it('reserves var-part space for null wide decimals and timestamps like Java', () => {
    const types = T('DECIMAL(38, 0)', 'TIMESTAMP(6)', 'STRING');
    const row = encodeBinaryRow(types, [null, null, null]);
    expect(toHex(row)).toBe(
      '0007000000000000' + '0000000020000000' + '0000000030000000' + '0000000000000000' + '00'.repeat(16) + '00'.repeat(8),
    );
    expect(decodeBinaryRow(row, types)).toEqual([null, null, null]);
  });

  it('inlines strings and binaries up to 7 bytes, longer ones padded in the var part', () => {
    const types = T('STRING', 'BYTES', 'STRING', 'VARBINARY(20)', 'STRING');
    const values: Value[] = ['', new Uint8Array([1, 2, 3]), 'abcdefgh', new Uint8Array(16).fill(7), 'é€'];
    const row = encodeBinaryRow(types, values);
    expect(toHex(row.subarray(8, 16))).toBe('0000000000000080');
    expect(toHex(row.subarray(16, 24))).toBe('0102030000000083');
    expect(toHex(row.subarray(24, 32))).toBe('0800000030000000');
    expect(toHex(row.subarray(32, 40))).toBe('1000000038000000');
    expect(toHex(row.subarray(40, 48))).toBe('c3a9e282ac000085');
    expect(row.length).toBe(48 + 8 + 16);
    expect(decodeBinaryRow(row, types)).toEqual(values);
  });

  it('widens the null bitset beyond 56 fields', () => {
    expect(nullBitsSizeInBytes(56)).toBe(8);
    expect(nullBitsSizeInBytes(57)).toBe(16);
    expect(nullBitsSizeInBytes(120)).toBe(16);
    expect(nullBitsSizeInBytes(121)).toBe(24);
    const types = Array.from({ length: 60 }, () => parseTypeString('INT'));
    const values: Value[] = types.map((_, i) => (i === 59 ? null : i));
    const row = encodeBinaryRow(types, values);
    expect(row.length).toBe(16 + 60 * 8);
    expect(row[1 + Math.floor(59 / 8)]).toBe(1 << (59 % 8));
    expect(decodeBinaryRow(row, types)).toEqual(values);
  });

  it('rejects mismatched values, arity and unsupported types', () => {
    expect(() => encodeBinaryRow(T('INT'), ['1'])).toThrow(FormatError);
    expect(() => encodeBinaryRow(T('BIGINT'), [1])).toThrow(/BIGINT/);
    expect(() => encodeBinaryRow(T('INT'), [])).toThrow(FormatError);
    expect(() => deserializeBinaryRow(hex('00000002 0000000000000000 0a00000000000000 0000000000000000'), T('INT'))).toThrow(/arity 2/);
    expect(() => encodeBinaryRow(T('ARRAY<INT>'), [null])).not.toThrow();
    expect(() => encodeBinaryRow(T('ARRAY<INT>'), [1])).toThrow(/not supported/);
    expect(() => decodeBinaryRow(hex('0000000000000000 0800000040000000'), T('STRING'))).toThrow(/outside/);
  });

  it('binaryRowBody strips the arity prefix without copying', () => {
    const ser = serializeBinaryRow(T('INT'), [7]);
    const body = binaryRowBody(ser, 1);
    expect(body.buffer).toBe(ser.buffer);
    expect(toHex(body)).toBe(toHex(encodeBinaryRow(T('INT'), [7])));
  });
});

describe('BigInteger byte conversion', () => {
  it('matches Java BigInteger.toByteArray', () => {
    const cases: Array<[bigint, string]> = [
      [0n, '00'],
      [127n, '7f'],
      [128n, '0080'],
      [-1n, 'ff'],
      [-128n, '80'],
      [-129n, 'ff7f'],
      [10n ** 38n - 1n, '4b3b4ca85a86c47a098a223fffffffff'],
    ];
    for (const [v, h] of cases) {
      expect(toHex(bigIntToBytes(v)), String(v)).toBe(h);
      expect(bytesToBigInt(hex(h))).toBe(v);
    }
  });
});
