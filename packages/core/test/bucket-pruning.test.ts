/**
 * Bucket pruning: a filter that fixes every bucket-key column reads only the buckets its values
 * hash to. For every key type the pruned read must return exactly the rows an unpruned read
 * filtered by the same predicate returns, and plan no more buckets than the values can hash to;
 * where the filter leaves a bucket-key column open, or the table has dynamic buckets, every bucket
 * is read.
 */
import type * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, evaluate, openTable, parsePredicate, type Predicate, type Table, type TableSpec } from '../src/index.js';
import { valueReader } from '../src/read/arrow-values.js';
import { bucketSelector } from '../src/scan/bucket-filter.js';
import { canonical } from '../src/read/aggregated-columns.js';
import type { RowObject } from '../src/write/table-write.js';

let n = 0;

async function tableOf(spec: TableSpec, rows: readonly RowObject[], batches = 3): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://bucket-pruning-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  const table = await openTable(catalog.tableLocation('db.t'), { fileIO: io });
  const per = Math.ceil(rows.length / batches);
  for (let i = 0; i < rows.length; i += per) await table.append(rows.slice(i, i + per));
  return table;
}

/** Every row of `batches` as internal values by column name. */
function rowsOf(table: Table, batches: readonly arrow.RecordBatch[]): Array<Record<string, unknown>> {
  const fields = table.schema().fields;
  const out: Array<Record<string, unknown>> = [];
  for (const b of batches) {
    const readers = fields.map((f) => valueReader(b.getChild(f.name)!.data[0]!, f.type));
    for (let i = 0; i < b.numRows; i++) out.push(Object.fromEntries(fields.map((f, c) => [f.name, readers[c]!(i)])));
  }
  return out;
}

async function batchesOf(read: AsyncIterable<arrow.RecordBatch>): Promise<arrow.RecordBatch[]> {
  const out: arrow.RecordBatch[] = [];
  for await (const b of read) out.push(b);
  return out;
}

/**
 * Reads `where` from `table` and checks it against the model (every row of an unpruned read that
 * the predicate keeps); at most `maxBuckets` buckets may be planned, every bucket when null.
 */
async function check(table: Table, where: string | Predicate, maxBuckets: number | null): Promise<number> {
  const predicate = typeof where === 'string' ? parsePredicate(where, table.schema().fields) : where;
  const all = rowsOf(table, await batchesOf(table.newRead().batches()));
  const model = all
    .filter((row) => evaluate(predicate, row) === true)
    .map(canonical)
    .sort();
  const read = table.newRead({ where: predicate });
  const planned = (await read.plan()).splits.length;
  const got = rowsOf(table, await batchesOf(read.batches()))
    .map(canonical)
    .sort();
  const label = typeof where === 'string' ? where : canonical(where);
  expect(got, label).toEqual(model);
  const selector = bucketSelector(table.schema(), predicate);
  if (maxBuckets === null) {
    // Not fixed by the filter: no bucket is pruned (files may still be skipped by their statistics).
    expect(selector, label).toBeNull();
  } else {
    expect(selector, label).not.toBeNull();
    const total = Number(table.schema().options['bucket']);
    expect([...Array(total).keys()].filter((b) => selector!(b, total)).length, label).toBeLessThanOrEqual(maxBuckets);
    expect(planned, label).toBeLessThanOrEqual(maxBuckets);
  }
  return model.length;
}

interface KeyCase {
  readonly name: string;
  readonly type: string;
  /** Key values as `append` takes them. */
  readonly values: readonly unknown[];
  /** The literal text of a value in a predicate. */
  readonly literal: (v: unknown) => string;
  /** Literals of absent keys. */
  readonly absent: readonly string[];
}

const quote = (v: unknown): string => `'${String(v).replace(/'/g, "''")}'`;
const num = (v: unknown): string => String(v);

const CASES: KeyCase[] = [
  { name: 'TINYINT', type: 'TINYINT', values: [-128, -1, 0, 1, 7, 42, 127], literal: num, absent: ['5'] },
  { name: 'SMALLINT', type: 'SMALLINT', values: [-32768, -3, 0, 300, 32767], literal: num, absent: ['301'] },
  { name: 'INT', type: 'INT', values: Array.from({ length: 40 }, (_, i) => i * 37 - 500), literal: num, absent: ['1', '2147483647'] },
  {
    name: 'BIGINT',
    type: 'BIGINT',
    values: Array.from({ length: 40 }, (_, i) => BigInt(i) * 9_007_199_254_740_993n - 3n),
    literal: num,
    absent: ['4', '-9223372036854775808'],
  },
  { name: 'DOUBLE', type: 'DOUBLE', values: [-0.0, 1.5, -2.25, 1e300, 3, 0.1, -1e-300, 7.75], literal: num, absent: ['2.5', '-7.75'] },
  { name: 'FLOAT', type: 'FLOAT', values: [1.5, -2.25, 3, 0.25, 1024.5, -0.0], literal: num, absent: ['0.5'] },
  {
    name: 'DECIMAL(10,2) (compact)',
    type: 'DECIMAL(10,2)',
    values: ['1.50', '-3.25', '0.00', '12345678.99', '7.10', '0.01'],
    // literals at another scale than the column's: 1.5 for 1.50, 7.100 for 7.10
    literal: (v) => String(v).replace(/0$/, ''),
    absent: ['1.505', '2.00', '99999999.99'],
  },
  {
    name: 'DECIMAL(30,4) (not compact)',
    type: 'DECIMAL(30,4)',
    values: ['1.5000', '-3.2500', '12345678901234567890.1234', '0.0001', '-99999999999999999999.9999'],
    literal: (v) => String(v).replace(/0+$/, '').replace(/\.$/, ''),
    absent: ['1.50001', '2'],
  },
  {
    name: 'TIMESTAMP(3)',
    type: 'TIMESTAMP(3)',
    values: ['2024-01-01 00:00:00.000', '1969-12-31 23:59:59.999', '2024-02-29 12:34:56.789', '2000-01-01 00:00:00.001'],
    literal: (v) => `TIMESTAMP ${quote(v)}`,
    absent: ["TIMESTAMP '2024-01-01 00:00:00.001'"],
  },
  {
    name: 'TIMESTAMP(6) (not compact)',
    type: 'TIMESTAMP(6)',
    values: ['2024-01-01 00:00:00.000001', '1969-12-31 23:59:59.999999', '2024-02-29 12:34:56.789012', '2024-01-01 00:00:00.000000'],
    literal: (v) => `TIMESTAMP ${quote(v)}`,
    absent: ["TIMESTAMP '2024-01-01 00:00:00.000002'"],
  },
  {
    name: 'TIMESTAMP_LTZ(3)',
    type: 'TIMESTAMP_LTZ(3)',
    values: ['2024-01-01 00:00:00.000', '2030-06-15 08:00:00.500', '1970-01-01 00:00:00.000'],
    literal: (v) => `TIMESTAMP ${quote(v)}`,
    absent: ["TIMESTAMP '2024-01-01 00:00:00.500'"],
  },
  {
    name: 'DATE',
    type: 'DATE',
    values: ['2024-01-01', '1969-07-20', '2100-12-31', '1970-01-01'],
    literal: (v) => `DATE ${quote(v)}`,
    absent: ["DATE '2024-01-02'"],
  },
  {
    name: 'STRING',
    type: 'STRING',
    // 7 bytes and less are stored inline in a BinaryRow, longer ones in its variable part
    values: ['', 'a', 'abcdefg', 'abcdefgh', 'a much longer key than eight bytes', 'é', '\u{1F600}x', "it's"],
    literal: quote,
    absent: ["'abcdef'", "'A'"],
  },
  { name: 'VARCHAR(20)', type: 'VARCHAR(20)', values: ['x', 'yy', 'zzzzzzzzzzzz'], literal: quote, absent: ["'xx'"] },
  {
    name: 'BYTES',
    type: 'BYTES',
    values: [new Uint8Array([]), new Uint8Array([1]), new Uint8Array([0, 255, 7, 8, 9, 10, 11, 12, 13])],
    literal: (v) => `X'${Buffer.from(v as Uint8Array).toString('hex')}'`,
    absent: ["X'02'"],
  },
  { name: 'BOOLEAN', type: 'BOOLEAN', values: [true, false], literal: (v) => (v ? 'TRUE' : 'FALSE'), absent: [] },
];

describe('bucket pruning by every key type', () => {
  for (const c of CASES) {
    it(`${c.name}: = and IN read one bucket per value, with the rows of an unpruned read`, async () => {
      const table = await tableOf(
        {
          fields: [
            { name: 'k', type: `${c.type} NOT NULL` },
            { name: 'v', type: 'INT' },
          ],
          primaryKeys: ['k'],
          options: { bucket: '4' },
        },
        c.values.map((k, i) => ({ k, v: i })),
      );
      // A zero float equals both signs of zero, which hash to two buckets.
      const per = c.type === 'DOUBLE' || c.type === 'FLOAT' ? 2 : 1;
      let found = 0;
      for (const v of c.values) found += await check(table, `k = ${c.literal(v)}`, per);
      expect(found).toBe(c.values.length);
      for (const a of c.absent) expect(await check(table, `k = ${a}`, per)).toBe(0);
      const some = c.values.slice(0, 3).map(c.literal);
      expect(await check(table, `k IN (${[...some, ...c.absent].join(', ')})`, per * (some.length + c.absent.length))).toBe(some.length);
      expect(await check(table, `k = ${some[0]} OR k = ${some[1] ?? some[0]}`, per * 2)).toBeGreaterThan(0);
      await check(table, `k = ${some[0]} AND v >= 0`, per);
      // Not fixed: a range, a negation, an OR with another column: every bucket.
      await check(table, `k <> ${some[0]}`, null);
      await check(table, `k = ${some[0]} OR v = 1`, null);
    });
  }

  it('literals in another representation hash like the stored values (number for BIGINT, decimal at another scale)', async () => {
    const table = await tableOf(
      {
        fields: [
          { name: 'k', type: 'BIGINT NOT NULL' },
          { name: 'd', type: 'DECIMAL(12,3) NOT NULL' },
          { name: 'v', type: 'INT' },
        ],
        primaryKeys: ['k', 'd'],
        options: { bucket: '4' },
      },
      Array.from({ length: 30 }, (_, i) => ({ k: BigInt(i * 1000), d: `${i}.250`, v: i })),
    );
    const p: Predicate = {
      kind: 'and',
      children: [
        { kind: 'compare', op: '=', column: 'k', type: { root: 'BIGINT', nullable: false }, value: 7000 },
        {
          kind: 'compare',
          op: '=',
          column: 'd',
          type: { root: 'DECIMAL', precision: 12, scale: 3, nullable: false },
          value: { unscaled: 725n, scale: 2 },
        },
      ],
    };
    expect(await check(table, p, 1)).toBe(1);
    const inexact: Predicate = {
      ...p,
      children: [p.children[0]!, { ...(p.children[1] as object), value: { unscaled: 72501n, scale: 4 } } as Predicate],
    };
    expect(await check(table, inexact, 0)).toBe(0);
  });

  it('composite keys: every key column fixed reads one bucket; one column open reads all', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({ a: i % 7, b: `name-${i}`, c: BigInt(i % 3), v: i }));
    const table = await tableOf(
      {
        fields: [
          { name: 'a', type: 'INT NOT NULL' },
          { name: 'b', type: 'STRING NOT NULL' },
          { name: 'c', type: 'BIGINT NOT NULL' },
          { name: 'v', type: 'INT' },
        ],
        primaryKeys: ['a', 'b', 'c'],
        options: { bucket: '4' },
      },
      rows,
    );
    expect(await check(table, "a = 3 AND b = 'name-10' AND c = 1", 1)).toBe(1);
    expect(await check(table, "c = 1 AND a = 3 AND b = 'name-10'", 1)).toBe(1);
    expect(await check(table, "a IN (3, 4) AND b IN ('name-10', 'name-11') AND c IN (1, 2)", 8)).toBe(2);
    await check(table, "a = 3 AND b = 'name-10'", null);
    await check(table, 'a = 3 AND c = 1', null);
  });

  it('bucket-key: a filter on the bucket-key columns prunes, one on other key columns does not', async () => {
    const table = await tableOf(
      {
        fields: [
          { name: 'a', type: 'INT NOT NULL' },
          { name: 'b', type: 'INT NOT NULL' },
          { name: 'v', type: 'INT' },
        ],
        primaryKeys: ['a', 'b'],
        options: { bucket: '4', 'bucket-key': 'b' },
      },
      Array.from({ length: 40 }, (_, i) => ({ a: i, b: i % 9, v: i })),
    );
    expect(await check(table, 'b = 5', 1)).toBe(4);
    await check(table, 'a = 5', null);
  });

  it('partitioned: the bucket key leaves out the partition columns', async () => {
    const table = await tableOf(
      {
        fields: [
          { name: 'dt', type: 'STRING NOT NULL' },
          { name: 'id', type: 'INT NOT NULL' },
          { name: 'v', type: 'INT' },
        ],
        partitionKeys: ['dt'],
        primaryKeys: ['dt', 'id'],
        options: { bucket: '4' },
      },
      Array.from({ length: 40 }, (_, i) => ({ dt: `2024-01-0${(i % 3) + 1}`, id: i, v: i })),
    );
    expect(await check(table, "dt = '2024-01-02' AND id = 4", 1)).toBe(1);
    // One partition pruned by its value, the bucket in each of the others by the key.
    expect(await check(table, 'id = 4', 3)).toBe(1);
  });

  it('append table with bucket-key', async () => {
    const table = await tableOf(
      {
        fields: [
          { name: 'k', type: 'STRING' },
          { name: 'v', type: 'INT' },
        ],
        options: { bucket: '4', 'bucket-key': 'k' },
      },
      Array.from({ length: 40 }, (_, i) => ({ k: `key-${i % 10}`, v: i })),
    );
    expect(await check(table, "k = 'key-3'", 1)).toBe(4);
    expect(await check(table, "k IN ('key-3', 'key-4', 'nope')", 3)).toBe(8);
  });

  it('dynamic buckets (bucket = -1): a key filter reads every bucket, since buckets are assigned, not hashed', async () => {
    const table = await tableOf(
      {
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'v', type: 'INT' },
        ],
        primaryKeys: ['k'],
        options: { bucket: '-1', 'dynamic-bucket.target-row-num': '10' },
      },
      Array.from({ length: 60 }, (_, i) => ({ k: i, v: i })),
    );
    expect((await table.newRead().plan()).splits.length).toBeGreaterThan(1);
    for (const k of [0, 17, 59]) expect(await check(table, `k = ${k}`, null)).toBe(1);
    expect(await check(table, 'k IN (3, 33, 58)', null)).toBe(3);
  });
});
