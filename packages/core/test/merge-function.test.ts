import { describe, expect, it } from 'vitest';
import type { DataType, TableSchema } from '@tidemark/format';
import {
  createMergeFunction,
  keyValueColumns,
  KeyValueChunks,
  mergeEngineOptions,
  parseRowKind,
  RowKind,
  rowKindToString,
  UnsupportedTableFeatureError,
  WriteValidationError,
  type KeyValue,
} from '../src/index.js';
import { valueReader } from '../src/read/arrow-values.js';
import { seededRandom } from './helpers.js';

const INT: DataType = { root: 'INT', nullable: false };
const NINT: DataType = { root: 'INT', nullable: true };
const NBIG: DataType = { root: 'BIGINT', nullable: true };
const NSTR: DataType = { root: 'VARCHAR', nullable: true, length: 100 } as DataType;

function schemaOf(cols: Array<[string, DataType]>, options: Record<string, string>): TableSchema {
  return {
    version: 3,
    id: 0,
    fields: cols.map(([name, type], id) => ({ id, name, type })),
    highestFieldId: cols.length - 1,
    partitionKeys: [],
    primaryKeys: ['k'],
    options,
    timeMillis: 0,
  };
}

let seq = 0;
function kv(value: unknown[], rowKind: KeyValue['rowKind'] = RowKind.INSERT): KeyValue {
  return { key: [value[0] as number], sequence: BigInt(seq++), rowKind, value: value as KeyValue['value'] };
}

function merge(schema: TableSchema, records: KeyValue[]): { kind: string; value: unknown[]; sequence: bigint } | null {
  const f = createMergeFunction(schema);
  f.reset();
  for (const r of records) f.add(r);
  const out = f.getResult();
  return out === null ? null : { kind: rowKindToString(out.rowKind), value: [...out.value], sequence: out.sequence };
}

describe('row kinds', () => {
  it('parses the four short strings and names the row of a bad one', () => {
    expect(['+I', '-U', '+U', '-D', ' +I '].map((s) => parseRowKind(s))).toEqual([0, 1, 2, 3, 0]);
    expect(() => parseRowKind('X', 4, 'op')).toThrow(WriteValidationError);
    expect(() => parseRowKind('X', 4, 'op')).toThrow(/column 'op', row 4: invalid row kind "X"/);
  });
});

describe('merge functions on materialized records', () => {
  const cols: Array<[string, DataType]> = [
    ['k', INT],
    ['a', NINT],
    ['b', NSTR],
  ];

  it('deduplicate keeps the last record with its row kind (a -D result keeps deleting older data)', () => {
    const s = schemaOf(cols, {});
    expect(merge(s, [kv([1, 1, 'x']), kv([1, 2, null])])).toMatchObject({ kind: '+I', value: [1, 2, null] });
    expect(merge(s, [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.DELETE)])).toMatchObject({ kind: '-D', value: [1, 1, 'x'] });
    expect(merge(schemaOf(cols, { 'ignore-delete': 'true' }), [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.DELETE)])).toMatchObject({
      kind: '+I',
    });
  });

  it('first-row keeps the first insert', () => {
    const s = schemaOf(cols, { 'merge-engine': 'first-row' });
    expect(merge(s, [kv([1, 1, 'x']), kv([1, 2, 'y'])])).toMatchObject({ kind: '+I', value: [1, 1, 'x'] });
  });

  it('partial-update folds non-null columns; remove-record-on-delete yields a -D with only NOT NULL values', () => {
    const s = schemaOf(cols, { 'merge-engine': 'partial-update' });
    const r = merge(s, [kv([1, 1, null]), kv([1, null, 'y']), kv([1, null, null])]);
    expect(r).toMatchObject({ kind: '+I', value: [1, 1, 'y'] });
    expect(r!.sequence).toBe(BigInt(seq - 1));
    expect(() => merge(s, [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.DELETE)])).toThrow(UnsupportedTableFeatureError);
    const rm = schemaOf(cols, { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' });
    expect(merge(rm, [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.DELETE)])).toMatchObject({ kind: '-D', value: [1, null, null] });
    expect(merge(rm, [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.DELETE), kv([1, null, 'z'])])).toMatchObject({
      kind: '+I',
      value: [1, null, 'z'],
    });
    // -U never removes the row (Java: only -D does).
    expect(merge(rm, [kv([1, 1, 'x']), kv([1, 1, 'x'], RowKind.UPDATE_BEFORE)])).toMatchObject({ kind: '+I', value: [1, 1, 'x'] });
  });

  it('partial-update sequence groups update a group only from records with a newer (or equal) group sequence', () => {
    const s = schemaOf(
      [
        ['k', INT],
        ['a', NINT],
        ['g1', NBIG],
        ['b', NSTR],
        ['g2', NBIG],
      ],
      { 'merge-engine': 'partial-update', 'fields.g1.sequence-group': 'a', 'fields.g2.sequence-group': 'b' },
    );
    // Group 1 arrives out of order: the record with g1 = 5 wins over the later one with g1 = 3.
    const out = merge(s, [kv([1, 10, 5n, null, null]), kv([1, 20, 3n, 'late', 1n]), kv([1, null, null, null, 2n])]);
    // The last record has g2 = 2 >= 1, so it sets b to its value, NULL.
    expect(out).toMatchObject({ kind: '+I', value: [1, 10, 5n, null, 2n] });
    // A record whose group sequence is all null leaves the group alone.
    expect(merge(s, [kv([1, 10, 5n, 'x', 1n]), kv([1, 99, null, null, null])])).toMatchObject({ value: [1, 10, 5n, 'x', 1n] });
    // A retraction with a newer group sequence sets the group's fields to NULL; other groups stay.
    expect(merge(s, [kv([1, 10, 5n, 'x', 1n]), kv([1, 10, 6n, null, null], RowKind.DELETE)])).toMatchObject({
      kind: '+I',
      value: [1, null, 6n, 'x', 1n],
    });
    // ...and an older one does nothing.
    expect(merge(s, [kv([1, 10, 5n, 'x', 1n]), kv([1, 10, 4n, null, null], RowKind.DELETE)])).toMatchObject({
      value: [1, 10, 5n, 'x', 1n],
    });
    const rmGroup = schemaOf(
      [
        ['k', INT],
        ['a', NINT],
        ['g1', NBIG],
      ],
      { 'merge-engine': 'partial-update', 'fields.g1.sequence-group': 'a', 'partial-update.remove-record-on-sequence-group': 'g1' },
    );
    expect(merge(rmGroup, [kv([1, 10, 5n]), kv([1, 10, 6n], RowKind.DELETE)])).toMatchObject({ kind: '-D', value: [1, null, null] });
  });

  it('aggregation applies the field functions, retracts, and removes on -D when configured', () => {
    const cols2: Array<[string, DataType]> = [
      ['k', INT],
      ['n', NBIG],
      ['m', NINT],
      ['s', NSTR],
    ];
    const o = {
      'merge-engine': 'aggregation',
      'fields.n.aggregate-function': 'sum',
      'fields.m.aggregate-function': 'max',
      'fields.s.aggregate-function': 'listagg',
    };
    const s = schemaOf(cols2, o);
    expect(merge(s, [kv([1, 5n, 3, 'a']), kv([1, 7n, 9, 'b']), kv([1, null, 1, null])])).toMatchObject({
      kind: '+I',
      value: [1, 12n, 9, 'a,b'],
    });
    const retract = schemaOf(cols2, { ...o, 'fields.m.ignore-retract': 'true', 'fields.s.ignore-retract': 'true' });
    expect(merge(retract, [kv([1, 5n, 3, 'a']), kv([1, 2n, 1, 'z'], RowKind.UPDATE_BEFORE)])).toMatchObject({
      kind: '+I',
      value: [1, 3n, 3, 'a'],
    });
    const rm = schemaOf(cols2, { ...o, 'aggregation.remove-record-on-delete': 'true' });
    expect(merge(rm, [kv([1, 5n, 3, 'a']), kv([1, 5n, 3, 'a'], RowKind.DELETE)])).toMatchObject({
      kind: '-D',
      value: [1, null, null, null],
    });
    expect(merge(rm, [kv([1, 5n, 3, 'a']), kv([1, 5n, 3, 'a'], RowKind.DELETE), kv([1, 1n, 1, 'c'])])).toMatchObject({
      kind: '+I',
      value: [1, 1n, 1, 'c'],
    });
  });

  it('the Arrow merge of the write buffer gives the same rows and kinds as the merge function', () => {
    const cols2: Array<[string, DataType]> = [
      ['k', INT],
      ['n', NBIG],
      ['s', NSTR],
    ];
    const s = schemaOf(cols2, {
      'merge-engine': 'aggregation',
      'fields.n.aggregate-function': 'sum',
      'fields.s.aggregate-function': 'max',
      'fields.s.ignore-retract': 'true',
    });
    const rand = seededRandom(42);
    const records: KeyValue[] = [];
    for (let i = 0; i < 200; i++) {
      const k = rand(20);
      const kind = rand(5) === 0 ? RowKind.UPDATE_BEFORE : RowKind.INSERT;
      records.push({
        key: [k],
        sequence: BigInt(i),
        rowKind: kind,
        value: [k, rand(4) === 0 ? null : BigInt(rand(100)), kind ? null : `v${rand(50)}`],
      });
    }
    const fields = s.fields;
    const chunks = new KeyValueChunks(fields, [fields[0]!]);
    const c = keyValueColumns(fields, records);
    chunks.add(c.columns, c.sequence, c.kinds);
    const merged = chunks.merge(mergeEngineOptions(s), true);
    const columns = merged.columns();
    const readers = columns.map((d, i) => valueReader(d, fields[i]!.type));
    const kinds = merged.kinds();
    const sequences = merged.sequences();
    const expected: unknown[] = [];
    for (let k = 0; k < 20; k++) {
      const f = createMergeFunction(s);
      f.reset();
      const group = records.filter((r) => r.key[0] === k);
      if (group.length === 0) continue;
      for (const r of group) f.add(r);
      const out = f.getResult()!;
      expected.push([out.rowKind, out.sequence, ...out.value]);
    }
    const actual = Array.from({ length: merged.length }, (_, i) => [kinds[i], sequences[i], ...readers.map((read) => read(i))]);
    expect(actual).toEqual(expected);
    expect(actual.length).toBeGreaterThan(10);
  });
});
