/**
 * Type changes beyond widening on disk: a table is written (Parquet) with the old types, each column
 * is changed by `alterTable` to a type Paimon casts it to, and the old file is read through the
 * rule's cast (named in each test; the value-level Java semantics are in cast-executors.test.ts).
 * Then: invalid values fail the read as in Java, primary-key tables merge old and new files, and
 * filters on changed columns never skip a matching file or row group by old-type statistics.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { MemoryFileIO } from '@tidemark/storage';
import { parseTypeString, serializeSchema, type DataType, type TableSchema, type Value } from '@tidemark/format';
import {
  FileSystemCatalog,
  SchemaChanges,
  TablePaths,
  UnsupportedTableFeatureError,
  alterTable,
  openTable,
  type Table,
  type TableSpec,
} from '../src/index.js';
import { CastValueError } from '../src/cast/errors.js';
import { valueReader } from '../src/read/arrow-values.js';

let n = 0;
async function newTable(spec: TableSpec): Promise<{ io: MemoryFileIO; location: string }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://casts-read-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return { io, location: catalog.tableLocation('db.t') };
}

/** Column `name` of a read result as internal values (exact decimals and timestamps), rows sorted by `id`. */
async function columnValues(table: Table, name: string, where?: string): Promise<Value[]> {
  const t = await table.newRead(where === undefined ? {} : { where }).toArrowTable();
  const ids = t.getChild('id')!.toArray() as Int32Array;
  const field = (await table.newRead().tableSchema()).fields.find((f) => f.name === name)!;
  const out: Array<[number, Value]> = [];
  for (const batch of t.batches) {
    const read = valueReader(batch.getChild(name)!.data[0]!, field.type);
    const bid = batch.getChild('id')!.data[0]!;
    for (let i = 0; i < batch.numRows; i++) out.push([(bid.values as Int32Array)[i]!, read(i)]);
  }
  expect(out.length).toBe(ids.length);
  return out.sort((a, b) => a[0] - b[0]).map((r) => r[1]);
}

const dec = (unscaled: bigint, scale: number): Value => ({ unscaled, scale });
const ts = (iso: string, nanoOfMillis = 0): Value => ({ millis: Date.parse(iso + 'Z'), nanoOfMillis });
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Pair {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
  /** Values written under `from` (row i of the table), then what Java reads as `to`. */
  readonly written: readonly unknown[];
  readonly read: readonly Value[];
}

const PAIRS: readonly Pair[] = [
  { rule: 'NumericPrimitiveCastRule', from: 'BIGINT', to: 'INT', written: [4294967301n, -1n], read: [5, -1] },
  { rule: 'NumericPrimitiveCastRule', from: 'DOUBLE', to: 'INT', written: [3.9, -1e20], read: [3, -2147483648] },
  { rule: 'NumericPrimitiveCastRule', from: 'DOUBLE', to: 'TINYINT', written: [300.7, -0.5], read: [44, 0] },
  { rule: 'NumericPrimitiveCastRule', from: 'DOUBLE', to: 'FLOAT', written: [0.1, 1e40], read: [Math.fround(0.1), Infinity] },
  { rule: 'DecimalToNumericPrimitiveCastRule', from: 'DECIMAL(10, 2)', to: 'BIGINT', written: ['123.99', '-123.99'], read: [123n, -123n] },
  { rule: 'DecimalToNumericPrimitiveCastRule', from: 'DECIMAL(10, 2)', to: 'DOUBLE', written: ['0.10', '-2.50'], read: [0.1, -2.5] },
  { rule: 'NumericPrimitiveToDecimalCastRule', from: 'DOUBLE', to: 'DECIMAL(5, 2)', written: [1.005, 1234.5], read: [dec(101n, 2), null] },
  { rule: 'NumericPrimitiveToDecimalCastRule', from: 'INT', to: 'DECIMAL(4, 1)', written: [12, 12345], read: [dec(120n, 1), null] },
  {
    rule: 'DecimalToDecimalCastRule',
    from: 'DECIMAL(10, 2)',
    to: 'DECIMAL(5, 1)',
    written: ['123.45', '12345.67'],
    read: [dec(1235n, 1), null],
  },
  { rule: 'BooleanToNumericCastRule', from: 'BOOLEAN', to: 'INT', written: [true, false], read: [1, 0] },
  { rule: 'NumericToBooleanCastRule', from: 'INT', to: 'BOOLEAN', written: [7, 0], read: [true, false] },
  { rule: 'NumericToStringCastRule', from: 'INT', to: 'STRING', written: [42, -7], read: ['42', '-7'] },
  { rule: 'NumericToStringCastRule', from: 'DOUBLE', to: 'STRING', written: [1e7, 0.001], read: ['1.0E7', '0.001'] },
  { rule: 'NumericToStringCastRule', from: 'FLOAT', to: 'STRING', written: [0.1, 1e10], read: ['0.1', '1.0E10'] },
  { rule: 'NumericToStringCastRule', from: 'DECIMAL(10, 2)', to: 'CHAR(6)', written: ['-0.05', '12.30'], read: ['-0.05 ', '12.30 '] },
  { rule: 'BooleanToStringCastRule', from: 'BOOLEAN', to: 'STRING', written: [true, false], read: ['true', 'false'] },
  {
    rule: 'TimestampToStringCastRule',
    from: 'TIMESTAMP(3)',
    to: 'STRING',
    written: ['2024-01-15 10:20:30', '1969-12-31 23:59:59.999'],
    read: ['2024-01-15 10:20:30.000', '1969-12-31 23:59:59.999'],
  },
  { rule: 'TimeToStringCastRule', from: 'TIME(3)', to: 'STRING', written: [45296789, 45296000], read: ['12:34:56.789', '12:34:56.0'] },
  { rule: 'DateToStringCastRule', from: 'DATE', to: 'STRING', written: ['2024-01-15', '1969-12-31'], read: ['2024-01-15', '1969-12-31'] },
  { rule: 'StringToStringCastRule', from: 'STRING', to: 'VARCHAR(3)', written: ['héllo', 'ab'], read: ['hél', 'ab'] },
  { rule: 'StringToStringCastRule', from: 'VARCHAR(10)', to: 'CHAR(4)', written: ['ab', 'abcdef'], read: ['ab  ', 'abcd'] },
  { rule: 'ArrayToStringCastRule', from: 'ARRAY<INT>', to: 'STRING', written: [[1, null, 3], []], read: ['[1, null, 3]', '[]'] },
  {
    rule: 'MapToStringCastRule',
    from: 'MAP<STRING, DOUBLE>',
    to: 'STRING',
    written: [new Map([['a', 1]]), new Map()],
    read: ['{a -> 1.0}', '{}'],
  },
  {
    rule: 'RowToStringCastRule',
    from: 'ROW<a INT, b STRING>',
    to: 'STRING',
    written: [
      { a: 1, b: 'x' },
      { a: null, b: 'y' },
    ],
    read: ['{1, x}', '{null, y}'],
  },
  { rule: 'StringToBooleanCastRule', from: 'STRING', to: 'BOOLEAN', written: ['Yes', '0'], read: [true, false] },
  { rule: 'StringToDecimalCastRule', from: 'STRING', to: 'DECIMAL(5, 2)', written: ['12.345', '1e5'], read: [dec(1235n, 2), null] },
  { rule: 'StringToNumericPrimitiveCastRule', from: 'STRING', to: 'INT', written: ['12.7', '-3'], read: [12, -3] },
  { rule: 'StringToNumericPrimitiveCastRule', from: 'STRING', to: 'DOUBLE', written: [' 1.5 ', '1e3'], read: [1.5, 1000] },
  { rule: 'StringToDateCastRule', from: 'STRING', to: 'DATE', written: ['2024-01-15', '2024-01-15 10:00:00'], read: [19737, 19737] },
  { rule: 'StringToTimeCastRule', from: 'STRING', to: 'TIME(3)', written: ['12:34:56.789', '12:34'], read: [45296789, 45240000] },
  {
    rule: 'StringToTimestampCastRule',
    from: 'STRING',
    to: 'TIMESTAMP(6)',
    written: ['2024-01-15 10:20:30.123456789', '2024-02-30'],
    read: [ts('2024-01-15T10:20:30.123', 456_000), ts('2024-02-29T00:00:00')],
  },
  { rule: 'StringToBinaryCastRule', from: 'STRING', to: 'BYTES', written: ['héllo', ''], read: [bytes('héllo'), bytes('')] },
  {
    rule: 'StringToBinaryCastRule',
    from: 'STRING',
    to: 'BINARY(3)',
    written: ['héllo', 'a'],
    read: [bytes('hé'), new Uint8Array([0x61, 0, 0])],
  },
  {
    rule: 'TimestampToTimestampCastRule',
    from: 'TIMESTAMP(6)',
    to: 'TIMESTAMP(3)',
    written: ['2024-01-15 10:20:30.123456', '1969-12-31 23:59:59.999999'],
    read: [ts('2024-01-15T10:20:30.123'), ts('1969-12-31T23:59:59.999')],
  },
  {
    rule: 'TimestampToDateCastRule',
    from: 'TIMESTAMP(3)',
    to: 'DATE',
    written: ['2024-01-15 23:59:59.999', '1969-12-31 12:00:00'],
    read: [19737, 0],
  },
  {
    rule: 'TimestampToTimeCastRule',
    from: 'TIMESTAMP(3)',
    to: 'TIME(3)',
    written: ['2024-01-15 10:20:30.123', '1969-12-31 12:00:00'],
    read: [37230123, -43200000],
  },
  {
    rule: 'DateToTimestampCastRule',
    from: 'DATE',
    to: 'TIMESTAMP(3)',
    written: ['2024-01-15', '1969-12-31'],
    read: [ts('2024-01-15T00:00:00'), ts('1969-12-31T00:00:00')],
  },
  {
    rule: 'TimeToTimestampCastRule',
    from: 'TIME(3)',
    to: 'TIMESTAMP(3)',
    written: [37230123, 0],
    read: [ts('1970-01-01T10:20:30.123'), ts('1970-01-01T00:00:00')],
  },
  {
    rule: 'TimestampToNumericPrimitiveCastRule',
    from: 'TIMESTAMP(3)',
    to: 'BIGINT',
    written: ['2024-01-15 10:20:30.999', '1969-12-31 23:59:58.500'],
    read: [1705314030n, -1n],
  },
  {
    rule: 'NumericPrimitiveToTimestamp',
    from: 'INT',
    to: 'TIMESTAMP(3)',
    written: [1705314030, -1],
    read: [ts('2024-01-15T10:20:30'), ts('1969-12-31T23:59:59')],
  },
  {
    rule: 'BinaryToBinaryCastRule',
    from: 'BYTES',
    to: 'BINARY(4)',
    written: [new Uint8Array([1, 2]), new Uint8Array([1, 2, 3, 4, 5])],
    read: [new Uint8Array([1, 2, 0, 0]), new Uint8Array([1, 2, 3, 4])],
  },
  {
    rule: 'BinaryToStringCastRule',
    from: 'BYTES',
    to: 'VARCHAR(2)',
    written: [bytes('héllo'), new Uint8Array([0x61])],
    read: ['héllo', 'a'],
  },
];

describe('each type pair on Parquet: written under the old type, altered, read with the rule Java uses', () => {
  let table: Table;
  beforeAll(async () => {
    const { io, location } = await newTable({
      fields: [{ name: 'id', type: 'INT' }, ...PAIRS.map((p, i) => ({ name: `c${i}`, type: p.from }))],
      options: { 'file.format': 'parquet' },
    });
    const rows = [0, 1, 2].map((r) => {
      const row: Record<string, unknown> = { id: r };
      PAIRS.forEach((p, i) => (row[`c${i}`] = r < p.written.length ? p.written[r] : null));
      return row;
    });
    await (await openTable(location, { fileIO: io })).append(rows);
    await alterTable(
      io,
      new TablePaths(location),
      PAIRS.map((p, i) => SchemaChanges.alterType(`c${i}`, p.to)),
    );
    table = await openTable(location, { fileIO: io });
  });

  PAIRS.forEach((p, i) => {
    it(`${p.rule}: ${p.from} → ${p.to}`, async () => {
      expect(table.schema().fields[i + 1]!.type).toEqual(parseTypeString(p.to));
      // The third row was written NULL: NULL stays NULL under every cast.
      expect(await columnValues(table, `c${i}`)).toEqual([...p.read, null]);
    });
  });
});

describe('values the rule cannot cast fail the read, as in Java', () => {
  it('STRING → INT with a non-number: CastValueError naming the file, column, value and both types; the table is unchanged', async () => {
    const { io, location } = await newTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'v', type: 'STRING' },
      ],
    });
    await (
      await openTable(location, { fileIO: io })
    ).append([
      { id: 1, v: '12' },
      { id: 2, v: 'abc' },
    ]);
    await alterTable(io, new TablePaths(location), [SchemaChanges.alterType('v', 'INT')]);
    const t = await openTable(location, { fileIO: io });
    const err = await t
      .newRead()
      .toArrowTable()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CastValueError);
    expect((err as CastValueError).userError).toBe(true);
    expect((err as Error).message).toMatch(
      /data-.*\.parquet: column 'v': cannot cast 'abc' from STRING to INT \(StringToNumericPrimitiveCastRule: .*Invalid character found/,
    );
    // Back to STRING: the same file reads again.
    await alterTable(io, new TablePaths(location), [SchemaChanges.alterType('v', 'STRING')]);
    expect(await columnValues(await openTable(location, { fileIO: io }), 'v')).toEqual(['12', 'abc']);
  });
});

describe('primary-key table: merge-on-read over files of both types', () => {
  it('STRING → INT value column: old updates merged with new ones, latest wins', async () => {
    const { io, location } = await newTable({
      fields: [
        { name: 'id', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['id'],
      options: { bucket: '1', 'file.format': 'parquet' },
    });
    const t0 = await openTable(location, { fileIO: io });
    await t0.append([
      { id: 1, v: '10' },
      { id: 2, v: '20' },
      { id: 3, v: '30' },
    ]);
    await t0.append([{ id: 1, v: '11' }]);
    await alterTable(io, new TablePaths(location), [SchemaChanges.alterType('v', 'INT')]);
    const t1 = await openTable(location, { fileIO: io });
    await t1.append([{ id: 2, v: 22 }]);
    expect(await columnValues(t1, 'v')).toEqual([11, 22, 30]);
    expect(await columnValues(t1, 'v', 'v >= 22')).toEqual([22, 30]);
  });
});

describe('filters on changed columns: old-type statistics never skip matching rows', () => {
  async function evolved(from: string, to: string, values: unknown[]): Promise<Table> {
    const { io, location } = await newTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'v', type: from },
      ],
      options: { 'file.format': 'parquet' },
    });
    // One file per value: file stats and row-group stats are both single-valued.
    const t = await openTable(location, { fileIO: io });
    for (const [i, v] of values.entries()) await t.append([{ id: i, v }]);
    await alterTable(io, new TablePaths(location), [SchemaChanges.alterType('v', to)]);
    return openTable(location, { fileIO: io });
  }

  it('INT → STRING: 10 reads as "10" although the old stats [10, 10] cast to text sort after "9"', async () => {
    const t = await evolved('INT', 'STRING', [9, 10, 100]);
    expect(await columnValues(t, 'v', "v = '10'")).toEqual(['10']);
    expect(await columnValues(t, 'v', "v < '2'")).toEqual(['10', '100']);
  });

  it('VARCHAR(10) → VARCHAR(3): "abcdef" reads as "abc", which its old stats ["abcdef"] would exclude', async () => {
    const t = await evolved('VARCHAR(10)', 'VARCHAR(3)', ['abcdef', 'zzz']);
    expect(await columnValues(t, 'v', "v = 'abc'")).toEqual(['abc']);
  });

  it('DECIMAL(10, 2) → DECIMAL(5, 1): 1.25 reads as 1.3 (HALF_UP), above its old max; an overflow reads NULL', async () => {
    const t = await evolved('DECIMAL(10, 2)', 'DECIMAL(5, 1)', ['1.25', '12345.67']);
    expect(await columnValues(t, 'v', 'v = 1.3')).toEqual([dec(13n, 1)]);
    // The old null count (0) does not decide IS NULL either: the overflow became NULL on read.
    expect(await columnValues(t, 'id', 'v IS NULL')).toEqual([1]);
  });

  it('TIMESTAMP(3) → DATE on pre-1970 values (Java divides toward zero)', async () => {
    const t = await evolved('TIMESTAMP(3)', 'DATE', ['1969-12-31 12:00:00']);
    expect(await columnValues(t, 'v', "v = DATE '1970-01-01'")).toEqual([0]);
  });

  it('integer widening keeps pruning by statistics (as Paimon keeps it)', async () => {
    const t = await evolved('INT', 'BIGINT', [5, 50, 500]);
    expect(await columnValues(t, 'v', 'v > 100')).toEqual([500n]);
    const plan = await t.newRead({ where: 'v > 100' }).plan();
    expect(plan.files().length).toBe(1);
  });
});

// Not a cast, but part of the read path the cast output goes through: Arrow types of the result.
describe('result schema', () => {
  it('a changed column has the new type in the Arrow result', async () => {
    const { io, location } = await newTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'v', type: 'DOUBLE' },
      ],
    });
    await (await openTable(location, { fileIO: io })).append([{ id: 1, v: 2.5 }]);
    await alterTable(io, new TablePaths(location), [SchemaChanges.alterType('v', 'STRING')]);
    const out = await (await openTable(location, { fileIO: io })).newRead().toArrowTable();
    expect(out.schema.fields[1]!.type).toBeInstanceOf(arrow.Utf8);
    expect(out.getChild('v')!.get(0)).toBe('2.5');
  });
});

describe('changes inside nested types (Java makes them through field paths)', () => {
  it('fail the read naming the column and both types, as not supported by tidemark', async () => {
    const { io, location } = await newTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'r', type: 'ROW<a INT>' },
      ],
    });
    const t0 = await openTable(location, { fileIO: io });
    await t0.append([{ id: 1, r: { a: 1 } }]);
    // What Java's `ALTER TABLE t ADD r.b STRING` writes: the same column id, a field added inside.
    const s0 = t0.schema();
    const r = s0.fields[1]!;
    const row = r.type as Extract<DataType, { root: 'ROW' }>;
    const next: TableSchema = {
      ...s0,
      id: 1,
      highestFieldId: s0.highestFieldId + 1,
      fields: [
        s0.fields[0]!,
        { ...r, type: { ...row, fields: [...row.fields, { id: s0.highestFieldId + 1, name: 'b', type: parseTypeString('STRING') }] } },
      ],
    };
    await io.write(new TablePaths(location).schemaPath(1), serializeSchema(next));
    const err = await (
      await openTable(location, { fileIO: io })
    )
      .newRead()
      .toArrowTable()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedTableFeatureError);
    expect((err as Error).message).toMatch(
      /column 'r': cannot read ROW<`a` INT> as ROW<`a` INT, `b` STRING>: changes inside nested types are not supported/,
    );
  });
});
