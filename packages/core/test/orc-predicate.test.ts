import { describe, expect, it } from 'vitest';
import { parseTypeString, type DataField } from '@tidemark/format';
import { parsePredicate } from '../src/predicate-parser.js';
import { orcPredicate } from '../src/read/orc-predicate.js';

const field = (id: number, name: string, type: string): DataField => ({ id, name, type: parseTypeString(type) });
const READ = [
  field(0, 'id', 'BIGINT'),
  field(1, 'name', 'STRING'),
  field(2, 'day', 'DATE'),
  field(3, 'ok', 'BOOLEAN'),
  field(4, 'n', 'INT'),
];
// The file as written: `n` was an INT column named `m` there and `id` was an INT (widened since).
const FILE = [field(0, 'id', 'INT'), field(1, 'name', 'STRING'), field(2, 'day', 'DATE'), field(3, 'ok', 'BOOLEAN'), field(4, 'm', 'INT')];

const translate = (where: string, fileFields: readonly (DataField | undefined)[] = FILE) =>
  orcPredicate(parsePredicate(where, READ), READ, fileFields);

describe('orcPredicate', () => {
  it('translates comparisons, IN and null tests to the file column names', () => {
    expect(translate("name = 'x'")).toEqual({ op: 'eq', column: 'name', value: 'x' });
    expect(translate('n >= 3')).toEqual({ op: 'ge', column: 'm', value: 3 });
    expect(translate('n <> 3')).toEqual({ op: 'ne', column: 'm', value: 3 });
    expect(translate('n IN (1, 2)')).toEqual({ op: 'in', column: 'm', values: [1, 2] });
    expect(translate('name IS NOT NULL')).toEqual({ op: 'isNotNull', column: 'name' });
    expect(translate("day < DATE '2024-01-02'")).toEqual({ op: 'lt', column: 'day', value: 19724 });
  });

  it('keeps the usable side of an AND and drops an OR with an unusable branch', () => {
    expect(translate("ok = true AND name = 'x'")).toEqual({ op: 'eq', column: 'name', value: 'x' });
    expect(translate("n = 1 AND name > 'a'")).toEqual({
      op: 'and',
      children: [
        { op: 'eq', column: 'm', value: 1 },
        { op: 'gt', column: 'name', value: 'a' },
      ],
    });
    expect(translate('n = 1 OR ok = true')).toBeNull();
    expect(translate("n = 1 OR name = 'x'")).toEqual({
      op: 'or',
      children: [
        { op: 'eq', column: 'm', value: 1 },
        { op: 'eq', column: 'name', value: 'x' },
      ],
    });
  });

  it('never prunes on what the statistics cannot decide', () => {
    expect(translate('id = 5')).toBeNull(); // the file's type differs (schema evolution)
    expect(translate('ok = true')).toBeNull(); // no usable ORC ordering
    expect(translate('NOT (n = 1)')).toBeNull();
    expect(translate('n NOT IN (1, 2)')).toBeNull();
    expect(translate('n = NULL')).toBeNull();
    expect(translate("name = 'x'", [undefined, undefined, undefined, undefined, undefined])).toBeNull(); // column added later
  });
});
