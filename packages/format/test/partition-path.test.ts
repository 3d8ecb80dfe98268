import { describe, expect, it } from 'vitest';
import { FormatError, SchemaError } from '../src/errors.js';
import { escapePathName, formatDate, localDateTimeToString, parsePartitionPath, partitionPath } from '../src/partition-path.js';
import { parseTypeString } from '../src/type-json.js';
import type { Value } from '../src/values.js';

const T = (...s: string[]) => s.map(parseTypeString);
const ts = (iso: string, nanoOfMillis = 0): Value => ({ millis: Date.parse(iso + 'Z'), nanoOfMillis });

describe('partitionPath (spec §1.1)', () => {
  it('joins key=value segments in key order with a trailing slash', () => {
    expect(partitionPath(['key0', 'key1'], T('INT', 'INT'), [0, 1])).toBe('key0=0/key1=1/');
    expect(partitionPath([], [], [])).toBe('');
  });

  it('renders values with Java toString in legacy mode', () => {
    const cases: Array<[string, Value, string]> = [
      ['STRING', 'abc', 'abc'],
      ['BOOLEAN', true, 'true'],
      ['BIGINT', -9223372036854775808n, '-9223372036854775808'],
      ['DATE', 19723, '19723'],
      ['DOUBLE', 1e10, '1.0E10'],
      ['DOUBLE', 2, '2.0'],
      ['FLOAT', 0.1, '0.1'],
      ['DECIMAL(10, 2)', { unscaled: -5n, scale: 2 }, '-0.05'],
      ['DECIMAL(38, 0)', { unscaled: 12n, scale: 0 }, '12'],
      ['TIMESTAMP(3)', ts('2024-01-01T10:00:00'), '2024-01-01T10%3A00'],
      ['TIMESTAMP(6)', ts('2024-01-01T10:00:05.120'), '2024-01-01T10%3A00%3A05.120'],
      ['TIMESTAMP(6)', ts('2024-01-01T00:00:00.000', 1000), '2024-01-01T00%3A00%3A00.000001'],
      ['TIMESTAMP(9)', ts('1969-12-31T23:59:59.999', 1), '1969-12-31T23%3A59%3A59.999000001'],
    ];
    for (const [type, v, expected] of cases) {
      expect(partitionPath(['p'], T(type), [v]), `${type} ${String(v)}`).toBe(`p=${expected}/`);
    }
  });

  it('renders SQL strings when legacy naming is off', () => {
    const o = { legacyName: false };
    expect(partitionPath(['d'], T('DATE'), [19723], o)).toBe('d=2024-01-01/');
    expect(partitionPath(['t'], T('TIMESTAMP(3)'), [ts('2024-01-01T10:00:00.5')], o)).toBe('t=2024-01-01 10%3A00%3A00.500/');
    expect(partitionPath(['t'], T('TIMESTAMP(0)'), [ts('2024-01-01T10:00:00')], o)).toBe('t=2024-01-01 10%3A00%3A00/');
    expect(partitionPath(['i'], T('INT'), [5], o)).toBe('i=5/');
  });

  it('uses the default partition name for null, empty and blank values', () => {
    expect(partitionPath(['a', 'b', 'c'], T('STRING', 'STRING', 'INT'), ['', '  ', null])).toBe(
      'a=__DEFAULT_PARTITION__/b=__DEFAULT_PARTITION__/c=__DEFAULT_PARTITION__/',
    );
    expect(partitionPath(['a'], T('STRING'), [null], { defaultName: 'none' })).toBe('a=none/');
  });

  it('escapes Hive special characters in keys and values, not non-ASCII', () => {
    expect(escapePathName('a/b:c=d%e')).toBe('a%2Fb%3Ac%3Dd%25e');
    expect(escapePathName('"#\'*?\\{}[]^\u007f\u0001\n')).toBe('%22%23%27%2A%3F%5C%7B%7D%5B%5D%5E%7F%01%0A');
    expect(escapePathName('ü €-_.+ ,')).toBe('ü €-_.+ ,');
    expect(partitionPath(['k=1'], T('STRING'), ['x/y'])).toBe('k%3D1=x%2Fy/');
  });

  it('rejects types without a stable string form and mismatched values', () => {
    expect(() => partitionPath(['b'], T('BYTES'), [new Uint8Array(1)])).toThrow(SchemaError);
    expect(() => partitionPath(['i'], T('INT'), ['1'])).toThrow(FormatError);
    expect(() => partitionPath(['i', 'j'], T('INT'), [1])).toThrow(FormatError);
  });
});

describe('parsePartitionPath', () => {
  it('inverts partitionPath', () => {
    const path = partitionPath(['dt', 'k=1'], T('TIMESTAMP(3)', 'STRING'), [ts('2024-01-01T10:00:00'), 'a/b']);
    expect(parsePartitionPath(path)).toEqual([
      ['dt', '2024-01-01T10:00'],
      ['k=1', 'a/b'],
    ]);
    expect(parsePartitionPath('')).toEqual([]);
    expect(() => parsePartitionPath('nokey/')).toThrow(FormatError);
  });
});

describe('Java date/time toString', () => {
  it('LocalDate.toString edge years', () => {
    expect(formatDate(0)).toBe('1970-01-01');
    expect(formatDate(-719528)).toBe('0000-01-01');
    expect(formatDate(2932897)).toBe('+10000-01-01');
  });
  it('LocalDateTime.toString omits zero seconds and groups the fraction by 3 digits', () => {
    expect(localDateTimeToString({ millis: 0, nanoOfMillis: 0 })).toBe('1970-01-01T00:00');
    expect(localDateTimeToString({ millis: 1000, nanoOfMillis: 0 })).toBe('1970-01-01T00:00:01');
    expect(localDateTimeToString({ millis: 0, nanoOfMillis: 100 })).toBe('1970-01-01T00:00:00.000000100');
  });
});
