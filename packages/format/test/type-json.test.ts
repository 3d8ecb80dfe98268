import { describe, expect, it } from 'vitest';
import { SchemaError } from '../src/errors.js';
import { isNumeric, parseTypeJson, parseTypeString, typeToJson, typeToString } from '../src/type-json.js';
import { MAX_LENGTH, type DataType } from '../src/types.js';

describe('atomic type strings', () => {
  const cases: Array<[string, DataType, string]> = [
    ['INT', { root: 'INT', nullable: true }, 'INT'],
    ['INTEGER NOT NULL', { root: 'INT', nullable: false }, 'INT NOT NULL'],
    ['bigint not null', { root: 'BIGINT', nullable: false }, 'BIGINT NOT NULL'],
    ['STRING', { root: 'VARCHAR', nullable: true, length: MAX_LENGTH }, 'STRING'],
    ['VARCHAR(2147483647) NOT NULL', { root: 'VARCHAR', nullable: false, length: MAX_LENGTH }, 'STRING NOT NULL'],
    ['VARCHAR(10)', { root: 'VARCHAR', nullable: true, length: 10 }, 'VARCHAR(10)'],
    ['CHAR(1)', { root: 'CHAR', nullable: true, length: 1 }, 'CHAR(1)'],
    ['BYTES', { root: 'VARBINARY', nullable: true, length: MAX_LENGTH }, 'BYTES'],
    ['VARBINARY(5)', { root: 'VARBINARY', nullable: true, length: 5 }, 'VARBINARY(5)'],
    ['BINARY(16)', { root: 'BINARY', nullable: true, length: 16 }, 'BINARY(16)'],
    ['DECIMAL(10, 2) NOT NULL', { root: 'DECIMAL', nullable: false, precision: 10, scale: 2 }, 'DECIMAL(10, 2) NOT NULL'],
    ['decimal(23,5)', { root: 'DECIMAL', nullable: true, precision: 23, scale: 5 }, 'DECIMAL(23, 5)'],
    ['TIMESTAMP(3)', { root: 'TIMESTAMP', nullable: true, precision: 3 }, 'TIMESTAMP(3)'],
    ['TIMESTAMP', { root: 'TIMESTAMP', nullable: true, precision: 6 }, 'TIMESTAMP(6)'],
    ['TIMESTAMP(6) WITH LOCAL TIME ZONE', { root: 'TIMESTAMP_LTZ', nullable: true, precision: 6 }, 'TIMESTAMP(6) WITH LOCAL TIME ZONE'],
    ['TIMESTAMP_LTZ(3) NOT NULL', { root: 'TIMESTAMP_LTZ', nullable: false, precision: 3 }, 'TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL'],
    ['TIME(0)', { root: 'TIME', nullable: true, precision: 0 }, 'TIME(0)'],
    ['DATE', { root: 'DATE', nullable: true }, 'DATE'],
    ['DOUBLE', { root: 'DOUBLE', nullable: true }, 'DOUBLE'],
    ['BOOLEAN NOT NULL', { root: 'BOOLEAN', nullable: false }, 'BOOLEAN NOT NULL'],
  ];
  for (const [input, type, printed] of cases) {
    it(`${input} -> ${printed}`, () => {
      expect(parseTypeString(input)).toEqual(type);
      expect(parseTypeJson(input)).toEqual(type);
      expect(typeToJson(type)).toBe(printed);
      expect(parseTypeString(printed)).toEqual(type);
    });
  }

  it('rejects unknown or malformed types', () => {
    for (const bad of ['FOO', 'DECIMAL(10, 2', 'INT NOT', 'TIMESTAMP(12)', 'DECIMAL(50, 2)', 'INT extra']) {
      expect(() => parseTypeString(bad), bad).toThrow(SchemaError);
    }
  });
});

describe('composite types', () => {
  it('parses and prints Java composite type JSON', () => {
    const json = {
      type: 'ROW NOT NULL',
      fields: [
        { id: 5, name: 'a', type: { type: 'ARRAY', element: 'INT NOT NULL' } },
        { id: 6, name: 'm', type: { type: 'MAP', key: 'STRING NOT NULL', value: 'DECIMAL(38, 10)' }, description: 'd' },
        { id: 7, name: 's', type: { type: 'MULTISET NOT NULL', element: 'STRING' } },
      ],
    };
    const t = parseTypeJson(json);
    expect(t).toEqual({
      root: 'ROW',
      nullable: false,
      fields: [
        { id: 5, name: 'a', type: { root: 'ARRAY', nullable: true, element: { root: 'INT', nullable: false } } },
        {
          id: 6,
          name: 'm',
          description: 'd',
          type: {
            root: 'MAP',
            nullable: true,
            key: { root: 'VARCHAR', nullable: false, length: MAX_LENGTH },
            value: { root: 'DECIMAL', nullable: true, precision: 38, scale: 10 },
          },
        },
        { id: 7, name: 's', type: { root: 'MULTISET', nullable: false, element: { root: 'VARCHAR', nullable: true, length: MAX_LENGTH } } },
      ],
    });
    expect(JSON.parse(JSON.stringify(typeToJson(t)))).toEqual(json);
  });

  it('parses SQL composite forms', () => {
    expect(parseTypeString('ARRAY<INT>')).toEqual({ root: 'ARRAY', nullable: true, element: { root: 'INT', nullable: true } });
    expect(parseTypeString('MAP<STRING, INT NOT NULL> NOT NULL')).toEqual({
      root: 'MAP',
      nullable: false,
      key: { root: 'VARCHAR', nullable: true, length: MAX_LENGTH },
      value: { root: 'INT', nullable: false },
    });
    const row = parseTypeString('ROW<a INT, `b c` STRING NOT NULL, n ROW<x DOUBLE>>');
    expect(row).toEqual({
      root: 'ROW',
      nullable: true,
      fields: [
        { id: 0, name: 'a', type: { root: 'INT', nullable: true } },
        { id: 1, name: 'b c', type: { root: 'VARCHAR', nullable: false, length: MAX_LENGTH } },
        {
          id: 2,
          name: 'n',
          type: { root: 'ROW', nullable: true, fields: [{ id: 3, name: 'x', type: { root: 'DOUBLE', nullable: true } }] },
        },
      ],
    });
    expect(typeToString(row)).toBe('ROW<`a` INT, `b c` STRING NOT NULL, `n` ROW<`x` DOUBLE>>');
    expect(parseTypeString(typeToString(row))).toEqual(row);
  });
});

describe('helpers', () => {
  it('isNumeric', () => {
    expect(isNumeric(parseTypeString('DECIMAL(5, 1)'))).toBe(true);
    expect(isNumeric(parseTypeString('TINYINT'))).toBe(true);
    expect(isNumeric(parseTypeString('STRING'))).toBe(false);
    expect(isNumeric(parseTypeString('DATE'))).toBe(false);
  });
});
