import { describe, expect, it } from 'vitest';
import type { DataField, DataType, TableSchema, Value } from '@tidemark/format';
import { AggregationError, type AggregationInput, type ElementRef } from '../src/read/aggregate-functions.js';
import { aggregateSorted, mergeEngineOptions, sortRecords, type KeyValueRecord } from '../src/read/merge-engine.js';
import { UnsupportedTableFeatureError } from '../src/scan/errors.js';

const INT: DataType = { root: 'INT', nullable: true };
const BIGINT: DataType = { root: 'BIGINT', nullable: true };
const TINYINT: DataType = { root: 'TINYINT', nullable: true };
const DOUBLE: DataType = { root: 'DOUBLE', nullable: true };
const FLOAT: DataType = { root: 'FLOAT', nullable: true };
const BOOL: DataType = { root: 'BOOLEAN', nullable: true };
const STR = { root: 'VARCHAR', nullable: true, length: 2147483647 } as DataType;
const DEC = (precision: number, scale: number): DataType => ({ root: 'DECIMAL', nullable: true, precision, scale }) as DataType;
const ARR: DataType = { root: 'ARRAY', nullable: true, element: INT } as DataType;
const MAP: DataType = { root: 'MAP', nullable: true, key: STR, value: INT } as DataType;
const K: DataType = { root: 'VARCHAR', nullable: false, length: 10 } as DataType;

const I = 0; // +I
const UB = 1; // -U
const UA = 2; // +U
const D = 3; // -D

function schemaOf(cols: [string, DataType][], options: Record<string, string>): TableSchema {
  const fields: DataField[] = [['k', K] as [string, DataType], ...cols].map(([name, type], id) => ({ id, name, type }));
  return {
    version: 3,
    id: 0,
    fields,
    highestFieldId: fields.length - 1,
    partitionKeys: [],
    primaryKeys: ['k'],
    options: { 'merge-engine': 'aggregation', ...options },
    timeMillis: 0,
  };
}

/** A record of key `k` with values for the value columns (arrays/maps as JS arrays / entry lists). */
interface Row {
  k: string;
  seq: number;
  kind?: number;
  v: unknown[];
}

/**
 * Runs the aggregation engine over in-memory rows and returns per key the plain result values of
 * the value columns (elements of collect/merge_map resolved back to JS values).
 */
function aggregate(cols: [string, DataType][], options: Record<string, string>, rows: Row[]): Record<string, unknown[]> {
  const schema = schemaOf(cols, options);
  const merge = mergeEngineOptions(schema);
  const values = new Map<KeyValueRecord, unknown[]>();
  const pool: unknown[] = [];
  const records = rows.map((r, i) => {
    const rec: KeyValueRecord = { key: [r.k], sequence: BigInt(r.seq), kind: r.kind ?? I, chunk: 0, row: i };
    values.set(rec, [r.k, ...r.v]);
    return rec;
  });
  const input: AggregationInput = {
    isNull: (r, c) => values.get(r)![c] === null,
    value: (r, c) => values.get(r)![c] as Value,
    elements: (r, c) =>
      (values.get(r)![c] as unknown[]).map((e): ElementRef => {
        pool.push(e);
        const id = schema.fields[c]!.type.root === 'MAP' ? JSON.stringify((e as unknown[])[0]) : JSON.stringify(e);
        return { chunk: 0, index: pool.length - 1, id };
      }),
  };
  const specs = schema.fields.map((f) => merge.aggregations!.get(f.name)!);
  const out: Record<string, unknown[]> = {};
  for (const m of aggregateSorted(sortRecords(records), merge, specs, input)) {
    const cells = m.cells!.map((cell, c) => {
      if (cell === null) return null;
      if ('ref' in cell) return values.get(cell.ref)![c];
      if ('value' in cell) return cell.value;
      return cell.elements.map((e) => pool[e.index]);
    });
    out[m.record.key[0] as string] = cells.slice(1);
  }
  return out;
}

const dec = (unscaled: bigint, scale: number): Value => ({ unscaled, scale });

describe('aggregation merge engine: functions', () => {
  it('defaults to last_non_null_value, and fields.default-aggregate-function applies to unset fields', () => {
    const rows: Row[] = [
      { k: 'a', seq: 1, v: [1, 'x'] },
      { k: 'a', seq: 2, v: [null, 'y'] },
      { k: 'a', seq: 3, v: [3, null] },
    ];
    expect(
      aggregate(
        [
          ['n', INT],
          ['s', STR],
        ],
        {},
        rows,
      ),
    ).toEqual({ a: [3, 'y'] });
    expect(
      aggregate(
        [
          ['n', INT],
          ['s', STR],
        ],
        { 'fields.default-aggregate-function': 'sum', 'fields.s.aggregate-function': 'last_value' },
        rows,
      ),
    ).toEqual({
      a: [4, null],
    });
  });

  it('sum skips nulls, wraps fixed-width integers like Java, keeps BIGINT exact and floats in float32', () => {
    const cols: [string, DataType][] = [
      ['i', INT],
      ['b', BIGINT],
      ['t', TINYINT],
      ['f', FLOAT],
      ['n', INT],
    ];
    const o = Object.fromEntries(cols.map(([c]) => [`fields.${c}.aggregate-function`, 'sum']));
    const out = aggregate(cols, o, [
      { k: 'a', seq: 1, v: [2147483647, 9007199254740993n, 127, 0.1, null] },
      { k: 'a', seq: 2, v: [1, 9007199254740993n, 1, 0.2, null] },
      { k: 'a', seq: 3, v: [null, null, null, null, null] },
    ]);
    expect(out.a).toEqual([-2147483648, 18014398509481986n, -128, Math.fround(Math.fround(0.1) + Math.fround(0.2)), null]);
    // The same values in a BIGINT column do not overflow.
    expect(
      aggregate([['b', BIGINT]], { 'fields.b.aggregate-function': 'sum' }, [
        { k: 'a', seq: 1, v: [2147483647n] },
        { k: 'a', seq: 2, v: [1n] },
      ]).a,
    ).toEqual([2147483648n]);
  });

  it('sums decimals exactly, with Java DecimalUtils overflow behaviour', () => {
    const o = {
      'fields.d.aggregate-function': 'sum',
      'fields.e.aggregate-function': 'sum',
      'fields.f.aggregate-function': 'sum',
    };
    const out = aggregate(
      [
        ['d', DEC(38, 2)],
        ['e', DEC(3, 1)],
        ['f', DEC(20, 0)],
      ],
      o,
      [
        { k: 'a', seq: 1, v: [dec(10n, 2), dec(990n, 1), dec(99999999999999999999n, 0)] },
        { k: 'a', seq: 2, v: [dec(20n, 2), dec(10n, 1), dec(1n, 0)] },
        { k: 'a', seq: 3, v: [dec(99999999999999999999999999999999999n, 2), null, null] },
      ],
    );
    // Precision <= 18 adds unscaled longs unchecked (99.0 + 1.0 = 100.0 in DECIMAL(3,1));
    // wider precisions go through fromBigDecimal, which yields null past the precision.
    expect(out.a).toEqual([dec(100000000000000000000000000000000029n, 2), dec(1000n, 1), null]);
  });

  it('sum retracts by subtracting; a retraction without accumulator negates', () => {
    const o = { 'fields.n.aggregate-function': 'sum', 'fields.d.aggregate-function': 'sum' };
    const out = aggregate(
      [
        ['n', INT],
        ['d', DEC(10, 2)],
      ],
      o,
      [
        { k: 'a', seq: 1, v: [10, dec(150n, 2)] },
        { k: 'a', seq: 2, kind: UB, v: [3, dec(25n, 2)] },
        { k: 'a', seq: 3, kind: UA, v: [4, null] },
        { k: 'b', seq: 1, kind: D, v: [5, dec(1n, 2)] },
        { k: 'b', seq: 2, v: [2, null] },
        // A key with a single record is passed through unmerged (Java's ReducerMergeFunctionWrapper):
        // a lone retraction is then dropped by the read.
        { k: 'c', seq: 1, kind: D, v: [5, dec(1n, 2)] },
      ],
    );
    expect(out).toEqual({ a: [11, dec(125n, 2)], b: [-3, dec(-1n, 2)] });
  });

  it('product multiplies, rounds decimals HALF_UP, and retracts by dividing', () => {
    const o = { 'fields.n.aggregate-function': 'product', 'fields.d.aggregate-function': 'product' };
    const out = aggregate(
      [
        ['n', INT],
        ['d', DEC(10, 1)],
      ],
      o,
      [
        { k: 'a', seq: 1, v: [6, dec(5n, 1)] },
        { k: 'a', seq: 2, v: [null, dec(5n, 1)] }, // 0.5 * 0.5 = 0.25 -> 0.3
        { k: 'a', seq: 3, v: [7, null] },
        { k: 'b', seq: 1, v: [12, dec(30n, 1)] },
        { k: 'b', seq: 2, kind: D, v: [-5, dec(20n, 1)] }, // 12 / -5 truncates to -2; 3.0 / 2.0 = 1.5
      ],
    );
    expect(out).toEqual({ a: [42, dec(3n, 1)], b: [-2, dec(15n, 1)] });
    expect(() =>
      aggregate([['d', DEC(10, 1)]], { 'fields.d.aggregate-function': 'product' }, [
        { k: 'a', seq: 1, v: [dec(10n, 1)] },
        { k: 'a', seq: 2, kind: D, v: [dec(30n, 1)] },
      ]),
    ).toThrow(AggregationError);
    expect(() =>
      aggregate([['n', INT]], { 'fields.n.aggregate-function': 'product' }, [
        { k: 'a', seq: 1, v: [1] },
        { k: 'a', seq: 2, kind: D, v: [0] },
      ]),
    ).toThrow(/divides by zero/);
  });

  it('max and min ignore nulls; ties keep the earlier value; retractions fail unless ignore-retract', () => {
    const o = { 'fields.hi.aggregate-function': 'max', 'fields.lo.aggregate-function': 'min', 'fields.s.aggregate-function': 'max' };
    const cols: [string, DataType][] = [
      ['hi', DOUBLE],
      ['lo', DEC(5, 2)],
      ['s', STR],
    ];
    const out = aggregate(cols, o, [
      { k: 'a', seq: 1, v: [1.5, dec(300n, 2), 'b'] },
      { k: 'a', seq: 2, v: [null, null, null] },
      { k: 'a', seq: 3, v: [9.25, dec(-100n, 2), 'ab'] },
      { k: 'a', seq: 4, v: [2, dec(-100n, 2), 'c'] },
    ]);
    expect(out.a).toEqual([9.25, dec(-100n, 2), 'c']);
    const retracting: Row[] = [
      { k: 'a', seq: 1, v: [1, dec(1n, 2), 'x'] },
      { k: 'a', seq: 2, kind: UB, v: [1, dec(1n, 2), 'x'] },
    ];
    expect(() => aggregate(cols, o, retracting)).toThrow(UnsupportedTableFeatureError);
    expect(() => aggregate(cols, o, retracting)).toThrow(/'max' of field 'hi'.*ignore-retract/);
    const ignoring = { ...o, 'fields.hi.ignore-retract': 'true', 'fields.lo.ignore-retract': 'true', 'fields.s.ignore-retract': 'true' };
    expect(aggregate(cols, ignoring, retracting).a).toEqual([1, dec(1n, 2), 'x']);
  });

  it('last_value takes nulls and is cleared by a retraction; last_non_null_value is cleared only by a non-null retraction', () => {
    const o = { 'fields.l.aggregate-function': 'last_value', 'fields.n.aggregate-function': 'last_non_null_value' };
    const cols: [string, DataType][] = [
      ['l', INT],
      ['n', INT],
    ];
    expect(
      aggregate(cols, o, [
        { k: 'a', seq: 1, v: [1, 1] },
        { k: 'a', seq: 2, v: [null, null] },
      ]).a,
    ).toEqual([null, 1]);
    expect(
      aggregate(cols, o, [
        { k: 'a', seq: 1, v: [1, 1] },
        { k: 'a', seq: 2, kind: UB, v: [5, null] },
        { k: 'b', seq: 1, v: [1, 1] },
        { k: 'b', seq: 2, kind: D, v: [5, 7] },
      ]),
    ).toEqual({ a: [null, 1], b: [null, null] });
  });

  it('first_value keeps the first record even when null; first_non_null_value (and its legacy name) the first non-null', () => {
    const o = {
      'fields.f.aggregate-function': 'first_value',
      'fields.g.aggregate-function': 'first_non_null_value',
      'fields.h.aggregate-function': 'first_not_null_value',
    };
    const out = aggregate(
      [
        ['f', INT],
        ['g', INT],
        ['h', INT],
      ],
      o,
      [
        { k: 'a', seq: 3, v: [3, 3, 3] },
        { k: 'a', seq: 1, v: [null, null, null] },
        { k: 'a', seq: 2, v: [2, 2, 2] },
      ],
    );
    expect(out.a).toEqual([null, 2, 2]);
    expect(() =>
      aggregate([['f', INT]], { 'fields.f.aggregate-function': 'first_value' }, [
        { k: 'a', seq: 1, v: [1] },
        { k: 'a', seq: 2, kind: D, v: [1] },
      ]),
    ).toThrow(/'first_value' of field 'f' does not support retraction/);
  });

  it('listagg joins non-blank strings with the configured delimiter, optionally distinct', () => {
    const o = {
      'fields.a.aggregate-function': 'listagg',
      'fields.b.aggregate-function': 'listagg',
      'fields.b.list-agg-delimiter': ' | ',
      'fields.c.aggregate-function': 'listagg',
      'fields.c.distinct': 'true',
    };
    const out = aggregate(
      [
        ['a', STR],
        ['b', STR],
        ['c', STR],
      ],
      o,
      [
        { k: 'x', seq: 1, v: [' ', 'p', 'u,v'] },
        { k: 'x', seq: 2, v: ['m', null, 'v,w'] },
        { k: 'x', seq: 3, v: ['n', 'q', 'u'] },
      ],
    );
    expect(out.x).toEqual(['m,n', 'p | q', 'u,v,w']);
  });

  it('bool_and / bool_or ignore nulls', () => {
    const o = { 'fields.a.aggregate-function': 'bool_and', 'fields.o.aggregate-function': 'bool_or' };
    const out = aggregate(
      [
        ['a', BOOL],
        ['o', BOOL],
      ],
      o,
      [
        { k: 'x', seq: 1, v: [true, false] },
        { k: 'x', seq: 2, v: [null, null] },
        { k: 'x', seq: 3, v: [false, true] },
        { k: 'y', seq: 1, v: [true, false] },
        { k: 'y', seq: 2, v: [true, null] },
      ],
    );
    expect(out).toEqual({ x: [false, true], y: [true, false] });
  });

  it('collect concatenates arrays, de-duplicates with fields.<f>.distinct and retracts one occurrence per element', () => {
    const o = { 'fields.c.aggregate-function': 'collect', 'fields.d.aggregate-function': 'collect', 'fields.d.distinct': 'true' };
    const out = aggregate(
      [
        ['c', ARR],
        ['d', ARR],
      ],
      o,
      [
        {
          k: 'x',
          seq: 1,
          v: [
            [1, 2],
            [1, 2],
          ],
        },
        { k: 'x', seq: 2, v: [null, null] },
        {
          k: 'x',
          seq: 3,
          v: [
            [2, 3, 2],
            [2, 3, 3],
          ],
        },
        { k: 'y', seq: 1, v: [[1, 1, 2], [5]] },
        { k: 'y', seq: 2, kind: UB, v: [[1, 9], [5]] },
      ],
    );
    expect(out).toEqual({
      x: [
        [1, 2, 2, 3, 2],
        [1, 2, 3],
      ],
      y: [[1, 2], []],
    });
  });

  it('merge_map lets later entries override keys and retracts keys', () => {
    const o = { 'fields.m.aggregate-function': 'merge_map' };
    const out = aggregate([['m', MAP]], o, [
      {
        k: 'x',
        seq: 1,
        v: [
          [
            ['a', 1],
            ['b', 2],
          ],
        ],
      },
      { k: 'x', seq: 2, v: [null] },
      {
        k: 'x',
        seq: 3,
        v: [
          [
            ['b', 20],
            ['c', 3],
          ],
        ],
      },
      { k: 'x', seq: 4, kind: D, v: [[['a', 999]]] },
    ]);
    expect(out.x).toEqual([
      [
        ['b', 20],
        ['c', 3],
      ],
    ]);
  });

  it('keeps a key whose values were all retracted (Java emits an INSERT), unless aggregation.remove-record-on-delete', () => {
    const rows: Row[] = [
      { k: 'a', seq: 1, v: [5] },
      { k: 'a', seq: 2, kind: D, v: [5] },
      { k: 'b', seq: 1, v: [5] },
      { k: 'b', seq: 2, kind: D, v: [5] },
      { k: 'b', seq: 3, v: [7] },
    ];
    const o = { 'fields.n.aggregate-function': 'sum' };
    expect(aggregate([['n', INT]], o, rows)).toEqual({ a: [0], b: [7] });
    // A -D removes the key; later records start a new aggregation.
    expect(aggregate([['n', INT]], { ...o, 'aggregation.remove-record-on-delete': 'true' }, rows)).toEqual({ b: [7] });
    // ignore-delete skips retractions entirely.
    expect(aggregate([['n', INT]], { ...o, 'ignore-delete': 'true' }, rows)).toEqual({ a: [5], b: [12] });
  });
});

describe('aggregation merge engine: options', () => {
  it('rejects unsupported functions, wrong types and sequence groups with UnsupportedTableFeatureError', () => {
    const bad =
      (cols: [string, DataType][], o: Record<string, string>): (() => unknown) =>
      () =>
        mergeEngineOptions(schemaOf(cols, o));
    expect(bad([['n', INT]], { 'fields.n.aggregate-function': 'nested_update' })).toThrow(UnsupportedTableFeatureError);
    expect(bad([['n', INT]], { 'fields.n.aggregate-function': 'nested_update' })).toThrow(/nested_update.*'n'/);
    expect(bad([['s', STR]], { 'fields.s.aggregate-function': 'sum' })).toThrow(/'sum' cannot aggregate field 's' of type VARCHAR/);
    expect(bad([['n', INT]], { 'fields.n.aggregate-function': 'collect' })).toThrow(UnsupportedTableFeatureError);
    expect(
      bad(
        [
          ['n', INT],
          ['g', INT],
        ],
        { 'fields.g.sequence-group': 'n' },
      ),
    ).toThrow(/sequence groups/);
    expect(bad([['n', INT]], { 'sequence.field': 'n', 'sequence.field.sort-order': 'sideways' })).toThrow(/sort-order/);
    expect(
      mergeEngineOptions(schemaOf([['n', INT]], { 'sequence.field': 'n', 'sequence.field.sort-order': 'descending' })).sequenceDescending,
    ).toBe(true);
    expect(bad([['n', INT]], { 'sequence.field': 'nope' })).toThrow(/'nope'/);
  });

  it('never aggregates primary keys and uses last_value for sequence fields', () => {
    const m = mergeEngineOptions(
      schemaOf(
        [
          ['ts', BIGINT],
          ['n', INT],
        ],
        { 'fields.default-aggregate-function': 'sum', 'sequence.field': 'ts' },
      ),
    );
    expect(m.aggregations!.get('k')!.fn).toBe('primary-key');
    expect(m.aggregations!.get('ts')!.fn).toBe('last_value');
    expect(m.aggregations!.get('n')!.fn).toBe('sum');
    expect(m.sequenceFields).toEqual(['ts']);
  });
});
