/**
 * Key filters on reads: `matchingRows` (the buffer-level tests of `c = v` / `c IN (…)`) against
 * the row-by-row evaluation, and merge-on-read reads with a key filter (applied before the merge)
 * against an unfiltered read filtered afterwards, for every merge engine.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { DataField } from '@tidemark/format';
import { FileSystemCatalog, evaluate, openTable, parsePredicate, type Predicate, type Table, type TableSpec } from '../src/index.js';
import { valueReader } from '../src/read/arrow-values.js';
import { canonical } from '../src/read/aggregated-columns.js';
import { matchingRows, sortedKeyRows } from '../src/read/row-filter.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

const FIELDS: DataField[] = [
  { id: 0, name: 'i', type: { root: 'INT', nullable: true } },
  { id: 1, name: 'b', type: { root: 'BIGINT', nullable: true } },
  { id: 2, name: 's', type: { root: 'VARCHAR', length: 2147483647, nullable: true } },
  { id: 3, name: 'd', type: { root: 'DATE', nullable: true } },
  { id: 4, name: 't', type: { root: 'SMALLINT', nullable: true } },
];

function batchOf(random: () => number, n: number): arrow.RecordBatch {
  const maybe = <T>(v: T): T | null => (random() < 0.1 ? null : v);
  const rows = Array.from({ length: n }, () => ({
    i: maybe(Math.floor(random() * 20) - 10),
    b: maybe(BigInt(Math.floor(random() * 20) - 10) * 4294967296n + BigInt(Math.floor(random() * 3))),
    s: maybe(['', 'a', 'bb', 'é', 'ab', '\u{1F600}'][Math.floor(random() * 6)]!),
    d: maybe(Math.floor(random() * 5)),
    t: maybe(Math.floor(random() * 7) - 3),
  }));
  return new arrow.Table({
    i: arrow.vectorFromArray(
      rows.map((r) => r.i),
      new arrow.Int32(),
    ),
    b: arrow.vectorFromArray(
      rows.map((r) => r.b),
      new arrow.Int64(),
    ),
    s: arrow.vectorFromArray(
      rows.map((r) => r.s),
      new arrow.Utf8(),
    ),
    d: arrow.vectorFromArray(
      rows.map((r) => r.d),
      new arrow.Int32(),
    ),
    t: arrow.vectorFromArray(
      rows.map((r) => r.t),
      new arrow.Int16(),
    ),
  }).batches[0]!;
}

function literal(random: () => number, column: string): unknown {
  switch (column) {
    case 'i':
      return random() < 0.2 ? BigInt(Math.floor(random() * 20) - 10) : random() < 0.1 ? 2.5 : Math.floor(random() * 20) - 10;
    case 'b':
      return random() < 0.3
        ? Math.floor(random() * 3)
        : BigInt(Math.floor(random() * 20) - 10) * 4294967296n + BigInt(Math.floor(random() * 3));
    case 's':
      return ['', 'a', 'bb', 'é', 'ab', 'x', '\u{1F600}'][Math.floor(random() * 7)];
    case 'd':
      return Math.floor(random() * 6);
    default:
      return Math.floor(random() * 7) - 3;
  }
}

function randomPredicate(random: () => number): Predicate {
  const leaf = (): Predicate => {
    const f = FIELDS[Math.floor(random() * FIELDS.length)]!;
    const r = random();
    if (r < 0.4) return { kind: 'compare', op: '=', column: f.name, type: f.type, value: random() < 0.05 ? null : literal(random, f.name) };
    if (r < 0.8) {
      const values = Array.from({ length: 1 + Math.floor(random() * 10) }, () => (random() < 0.05 ? null : literal(random, f.name)));
      return { kind: 'in', column: f.name, type: f.type, values, negated: random() < 0.2 };
    }
    return { kind: 'compare', op: random() < 0.5 ? '<' : '!=', column: f.name, type: f.type, value: literal(random, f.name) };
  };
  const k = 1 + Math.floor(random() * 3);
  const children = Array.from({ length: k }, leaf);
  if (random() < 0.2) return { kind: 'or', children };
  return k === 1 ? children[0]! : { kind: 'and', children };
}

describe('matchingRows', () => {
  it('keeps exactly the rows evaluate() finds TRUE (NULLs, bigint/number literals, strings by UTF-8 length)', () => {
    const random = seededRandom(2606);
    for (let trial = 0; trial < 400; trial++) {
      const batch = batchOf(random, 1 + Math.floor(random() * 60));
      const predicate = randomPredicate(random);
      const readers = FIELDS.map((f, c) => valueReader(batch.data.children[c]!, f.type));
      const model: number[] = [];
      for (let i = 0; i < batch.numRows; i++) {
        if (evaluate(predicate, Object.fromEntries(FIELDS.map((f, c) => [f.name, readers[c]!(i)]))) === true) model.push(i);
      }
      const got = matchingRows(batch, FIELDS, predicate);
      expect(got ?? [...Array(batch.numRows).keys()], canonical(predicate)).toEqual(model);
    }
  });
});

describe('sortedKeyRows', () => {
  it('finds by binary search in a key-sorted batch exactly the rows a full test keeps (BIGINT over the 32-bit halves, INT)', () => {
    const random = seededRandom(7919);
    for (let trial = 0; trial < 300; trial++) {
      const big = random() < 0.5;
      const n = Math.floor(random() * 200);
      // Keys around 0 and around ±2^32 and ±2^63, with repeats (several records of a key).
      const pool = big
        ? [0n, 1n, -1n, 4294967295n, 4294967296n, -4294967296n, 9223372036854775807n, -9223372036854775808n, 123456789012n, -5n]
        : [0, 1, -1, 2147483647, -2147483648, 65536, -65536, 7];
      const keys = Array.from({ length: n }, () => pool[Math.floor(random() * pool.length)]!).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const field: DataField = { id: 0, name: 'k', type: big ? { root: 'BIGINT', nullable: false } : { root: 'INT', nullable: false } };
      const batch =
        new arrow.Table({ k: arrow.vectorFromArray(keys as never[], big ? new arrow.Int64() : new arrow.Int32()) }).batches[0] ?? null;
      if (batch === null) continue;
      const literals = Array.from({ length: 1 + Math.floor(random() * 5) }, () => {
        const v = pool[Math.floor(random() * pool.length)]!;
        const r = random();
        if (r < 0.2) return typeof v === 'bigint' && v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
        if (r < 0.3) return big ? 999n : 999;
        if (r < 0.35) return 2.5;
        return v;
      });
      const predicate = { kind: 'in', column: 'k', type: field.type, values: literals, negated: false } as const;
      const got = sortedKeyRows(batch, [field], field, literals);
      expect(got, `${literals.map(String).join(',')} in ${keys.map(String).join(',')}`).toEqual(
        matchingRows(batch, [field], predicate) ?? [...Array(n).keys()],
      );
    }
  });
});

let n = 0;
async function tableOf(spec: TableSpec): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://key-filter-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function rows(table: Table, where?: string): Promise<string[]> {
  const fields = table.schema().fields;
  const out: string[] = [];
  for await (const b of table.newRead(where === undefined ? {} : { where }).batches()) {
    const readers = fields.map((f) => valueReader(b.getChild(f.name)!.data[0]!, f.type));
    for (let i = 0; i < b.numRows; i++) out.push(canonical(Object.fromEntries(fields.map((f, c) => [f.name, readers[c]!(i)]))));
  }
  return out.sort();
}

const ENGINES: Array<{ name: string; options: Record<string, string> }> = [
  { name: 'deduplicate', options: {} },
  { name: 'partial-update', options: { 'merge-engine': 'partial-update' } },
  {
    name: 'aggregation',
    options: { 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'sum', 'fields.w.aggregate-function': 'max' },
  },
  { name: 'first-row', options: { 'merge-engine': 'first-row' } },
];

describe('merge-on-read with a key filter', () => {
  for (const engine of ENGINES) {
    it(`${engine.name}: the filtered read equals the unfiltered read filtered afterwards`, async () => {
      const table = await tableOf({
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'name', type: 'STRING NOT NULL' },
          { name: 'v', type: 'BIGINT' },
          { name: 'w', type: 'STRING' },
        ],
        primaryKeys: ['k', 'name'],
        options: { bucket: '2', 'write-only': 'true', ...engine.options },
      });
      const random = seededRandom(engine.name.length * 31);
      // Several overlapping writes of the same keys, so that merging decides the result.
      for (let w = 0; w < 4; w++) {
        await table.append(
          Array.from({ length: 40 }, () => {
            const k = Math.floor(random() * 12);
            return {
              k,
              name: `n${k % 3}`,
              v: random() < 0.2 ? null : BigInt(Math.floor(random() * 100)),
              w: random() < 0.2 ? null : `w${w}`,
            };
          }),
        );
      }
      const all = await rows(table);
      const fields = table.schema().fields;
      for (const where of [
        "k = 3 AND name = 'n0'",
        'k = 4',
        'k IN (1, 2, 5, 7, 11, 40)',
        "name IN ('n1', 'n2') AND k < 6",
        'k = 3 AND v > 10',
        'k >= 9',
      ]) {
        const predicate = parsePredicate(where, fields);
        const model = all.filter((r) => {
          const row = JSON.parse(r, (_k, v: unknown) =>
            typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v,
          ) as Record<string, unknown>;
          return evaluate(predicate, row) === true;
        });
        expect(await rows(table, where), where).toEqual(model);
      }
    });
  }
});
