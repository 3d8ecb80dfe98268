/**
 * Property test of the typed-array write buffer (write/key-value/sort-buffer.ts) against the
 * record-object merge that reads and compaction use (read/merged-columns.ts `KeyValueChunks`):
 * random chunks of records (keys of every normalized type, duplicates, nulls, row kinds) merged
 * by every merge engine give the same rows, row kinds and sequence numbers, in the same order,
 * whole and in slices; the unmerged order (the `input` changelog) is the same too.
 */
import { describe, expect, it } from 'vitest';
import type * as arrow from 'apache-arrow';
import { parseTypeString, type DataField, type DataType, type TableSchema, type Value } from '@tidemark/format';
import { canonical } from '../src/read/aggregated-columns.js';
import { valueReader } from '../src/read/arrow-values.js';
import { mergeEngineOptions } from '../src/read/merge-engine.js';
import { KeyValueChunks } from '../src/read/merged-columns.js';
import { buildColumn } from '../src/write/arrow-columns.js';
import { trimmedKeyFields } from '../src/write/key-value/key-value.js';
import { KeyValueSortBuffer } from '../src/write/key-value/sort-buffer.js';
import { toInternal, type WriteValue } from '../src/write/value-conversion.js';
import { seededRandom } from './helpers.js';

type Rand = (n: number) => number;

/** Key column types and a generator of raw values from a small domain (so keys repeat). */
const KEY_TYPES: Array<[string, (rand: Rand) => unknown]> = [
  ['INT NOT NULL', (rand) => rand(40) - 20],
  ['BIGINT NOT NULL', (rand) => BigInt(rand(40) - 20) * (rand(2) ? 1n : 4_294_967_296n)],
  ['SMALLINT NOT NULL', (rand) => rand(30) - 15],
  ['DOUBLE NOT NULL', (rand) => [NaN, -0, 0, Infinity, -Infinity, 1.5, -1.5, 2.5, 1e300, -1e-300, 5e-324][rand(11)]],
  ['FLOAT NOT NULL', (rand) => [NaN, -0, 0, Infinity, -Infinity, 1.5, -1.5, 3.25][rand(8)]],
  ['STRING NOT NULL', (rand) => ['', 'a', 'a\u0000', 'ab', 'prefix-0001', 'prefix-0001x', 'prefix-0002', 'é', 'z'.repeat(20)][rand(9)]],
  ['DECIMAL(20, 3) NOT NULL', (rand) => `${rand(20) - 10}.${rand(3)}`],
  ['TIMESTAMP(6) NOT NULL', (rand) => BigInt(rand(20) - 10) * 999_999n],
  ['DATE NOT NULL', (rand) => rand(20) - 10],
  ['BOOLEAN NOT NULL', (rand) => rand(2) === 1],
  ['INT', (rand) => (rand(5) === 0 ? null : rand(10))],
];

interface Engine {
  readonly name: string;
  readonly options: Record<string, string>;
  /** Row kinds the engine merges without refusing (0 +I, 1 -U, 2 +U, 3 -D). */
  readonly kinds: readonly number[];
}

const ENGINES: Engine[] = [
  { name: 'deduplicate', options: {}, kinds: [0, 1, 2, 3] },
  { name: 'deduplicate, ignore-delete', options: { 'ignore-delete': 'true' }, kinds: [0, 1, 2, 3] },
  { name: 'deduplicate, sequence.field', options: { 'sequence.field': 'ts' }, kinds: [0, 2, 3] },
  {
    name: 'deduplicate, descending sequence.field',
    options: { 'sequence.field': 'ts', 'sequence.field.sort-order': 'descending' },
    kinds: [0, 2, 3],
  },
  { name: 'deduplicate, string sequence.field', options: { 'sequence.field': 'v' }, kinds: [0, 3] },
  { name: 'first-row', options: { 'merge-engine': 'first-row' }, kinds: [0] },
  { name: 'first-row, ignore-delete', options: { 'merge-engine': 'first-row', 'ignore-delete': 'true' }, kinds: [0, 1, 3] },
  {
    name: 'partial-update, remove-record-on-delete',
    options: { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
    kinds: [0, 2, 3],
  },
  { name: 'partial-update, ignore-delete', options: { 'merge-engine': 'partial-update', 'ignore-delete': 'true' }, kinds: [0, 1, 3] },
  {
    name: 'partial-update, sequence group',
    options: { 'merge-engine': 'partial-update', 'fields.ts.sequence-group': 'v,n' },
    kinds: [0, 1, 2, 3],
  },
  {
    name: 'aggregation with retractions, remove-record-on-delete',
    options: {
      'merge-engine': 'aggregation',
      'fields.n.aggregate-function': 'sum',
      'fields.ts.aggregate-function': 'max',
      'fields.ts.ignore-retract': 'true',
      'fields.v.aggregate-function': 'last_non_null_value',
      'fields.d.aggregate-function': 'min',
      'fields.d.ignore-retract': 'true',
      'fields.a.aggregate-function': 'collect',
      'fields.a.ignore-retract': 'true',
      'aggregation.remove-record-on-delete': 'true',
    },
    kinds: [0, 1, 2, 3],
  },
  {
    name: 'aggregation, sequence.field',
    options: { 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum', 'sequence.field': 'ts' },
    kinds: [0, 2],
  },
];

function schemaOf(keyType: string, engine: Engine, composite: boolean): TableSchema {
  const t = (s: string): DataType => parseTypeString(s);
  const fields: DataField[] = [
    { id: 0, name: 'k', type: t(keyType) },
    { id: 1, name: 'k2', type: t('STRING NOT NULL') },
    { id: 2, name: 'v', type: t('STRING') },
    { id: 3, name: 'n', type: t('INT') },
    { id: 4, name: 'ts', type: t('BIGINT') },
    { id: 5, name: 'd', type: t('DOUBLE') },
    { id: 6, name: 'a', type: t('ARRAY<INT>') },
  ];
  return {
    version: 3,
    id: 0,
    fields,
    highestFieldId: 6,
    partitionKeys: [],
    primaryKeys: composite ? ['k', 'k2'] : ['k'],
    options: { bucket: '1', ...engine.options },
    timeMillis: 0,
  } as TableSchema;
}

/** A chunk of `rows` random records: columns in schema order and row kinds. */
function chunkOf(schema: TableSchema, keyGen: (rand: Rand) => unknown, kinds: readonly number[], rows: number, rand: Rand) {
  const raw: Record<string, unknown>[] = [];
  for (let r = 0; r < rows; r++) {
    raw.push({
      k: keyGen(rand),
      k2: ['x', 'y', 'prefix-shared-1', 'prefix-shared-2'][rand(4)],
      v: rand(4) === 0 ? null : `v${rand(8)}`,
      n: rand(4) === 0 ? null : rand(100),
      ts: rand(4) === 0 ? null : BigInt(rand(6)),
      d: rand(4) === 0 ? null : [NaN, -0, 0, 1.5, -2][rand(5)],
      a: rand(4) === 0 ? null : [rand(3), rand(3)],
    });
  }
  const columns = schema.fields.map((f) =>
    buildColumn(
      f.type,
      raw.map((row) => toInternal(f.type, row[f.name]) as WriteValue),
    ),
  );
  return { columns, kinds: Int8Array.from({ length: rows }, () => kinds[rand(kinds.length)]!) };
}

/** Rows as comparable strings: row kind, sequence number and every value. */
function rowsOf(schema: TableSchema, columns: readonly arrow.Data[], sequence: BigInt64Array, kinds: Int8Array): string[] {
  const readers = schema.fields.map((f, c) => valueReader(columns[c]!, f.type));
  const out: string[] = [];
  for (let i = 0; i < kinds.length; i++) {
    const values: Value[] = readers.map((read) => read(i));
    out.push(canonical([kinds[i], sequence[i], values]));
  }
  return out;
}

describe('typed-array write buffer = record-object merge', () => {
  for (const engine of ENGINES) {
    it(engine.name, () => {
      const rand = seededRandom(0x5eed + engine.name.length * 7919);
      for (let trial = 0; trial < 24; trial++) {
        const [keyType, keyGen] = KEY_TYPES[trial % KEY_TYPES.length]!;
        const schema = schemaOf(keyType, engine, rand(3) === 0);
        const options = mergeEngineOptions(schema);
        const keyFields = trimmedKeyFields(schema);
        const seqFields = (options.sequenceFields ?? []).map((n) => schema.fields.find((f) => f.name === n)!);
        const firstSequence = BigInt(rand(3)) * 4_294_967_290n + BigInt(rand(100));
        const oldMerge = new KeyValueChunks(schema.fields, keyFields, seqFields);
        const buffer = new KeyValueSortBuffer(schema.fields, keyFields, seqFields, options.sequenceDescending ?? false);
        let next = firstSequence;
        const chunkCount = 1 + rand(4);
        for (let c = 0; c < chunkCount; c++) {
          // Sizes on both sides of the insertion-sort threshold.
          const { columns, kinds } = chunkOf(schema, keyGen, engine.kinds, rand(3) === 0 ? rand(20) : 20 + rand(300), rand);
          const sequence = BigInt64Array.from({ length: kinds.length }, () => next++);
          oldMerge.add(columns, sequence, kinds);
          buffer.add(columns, kinds);
        }
        const context = `${engine.name}, key ${keyType}, trial ${trial}`;
        const expected = oldMerge.merge(options, true);
        const sorted = buffer.sort(firstSequence);
        const actual = sorted.merge(options);
        expect(actual.length, context).toBe(expected.length);
        const want = rowsOf(schema, expected.columns(), expected.sequences(), expected.kinds());
        expect(rowsOf(schema, actual.columns(), actual.sequences(), actual.kinds()), context).toEqual(want);
        // Slices (a flush hands the file writer 64k rows at a time) hold the same rows.
        const cut = rand(actual.length + 1);
        const sliced = [
          ...rowsOf(schema, actual.columns(0, cut), actual.sequences(0, cut), actual.kinds(0, cut)),
          ...rowsOf(schema, actual.columns(cut), actual.sequences(cut), actual.kinds(cut)),
        ];
        expect(sliced, context).toEqual(want);
        // The unmerged records in merge order (sortRecords sorted oldMerge.records in place).
        const unmerged = sorted.slice(0, sorted.length);
        expect(Array.from(unmerged.sequence), context).toEqual(oldMerge.records.map((r) => r.sequence));
        expect(Array.from(unmerged.kinds), context).toEqual(oldMerge.records.map((r) => r.kind));
      }
    });
  }
});
