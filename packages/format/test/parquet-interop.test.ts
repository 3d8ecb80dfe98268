import { FIXTURES as SHARED_FIXTURES } from './fixtures.js';
import * as arrow from 'apache-arrow';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import {
  conformToPaimonTypes,
  decodeInt96,
  keyValueFileFields,
  readParquetFile,
  readParquetFooter,
  toArrowSchema,
  utf8Vector,
  writeParquetFile,
} from '../src/index.js';
import type { DataField, DataType } from '../src/types.js';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { int96ParquetFile, javaInt96 } from './helpers/int96-parquet.js';

const FIXTURES = SHARED_FIXTURES;
const haveFixtures = existsSync(FIXTURES);
if (!haveFixtures) console.warn(`[skip] Paimon fixtures not found at ${FIXTURES}; fixture tests skipped`);

const INT = (nullable = true): DataType => ({ root: 'INT', nullable });
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.parquet') ? [p] : [];
  });

async function read(io: CountingFileIO, path: string, fields: DataField[], columns?: string[]) {
  const rows: Record<string, unknown>[] = [];
  let schema: arrow.Schema | undefined;
  for await (const b of readParquetFile(io.asFileIO(), path, columns ? { columns } : {})) {
    const c = conformToPaimonTypes(b, fields);
    schema = c.schema;
    for (const r of c) rows.push(r!.toJSON() as Record<string, unknown>);
  }
  return { rows, schema };
}

describe.skipIf(!haveFixtures)('Java-written fixture data files', () => {
  const io = new CountingFileIO();
  const schema0: DataField[] = ['key0', 'key1', 'a', 'b', 'c', 'd', 'k'].map((name, i) => ({ id: i, name, type: INT() }));
  const schema1: DataField[] = [
    { id: 0, name: 'key0', type: INT() },
    { id: 1, name: 'key1', type: INT() },
    { id: 6, name: 'k', type: INT() },
    { id: 3, name: 'c', type: INT() },
    { id: 7, name: 'd', type: INT() },
    { id: 5, name: 'a', type: INT() },
    { id: 8, name: 'e', type: INT() },
  ];

  it('append-schema-evolution: snapshot-1 files hold the schema-0 rows, read with projection', async () => {
    const all = files(join(FIXTURES, 'append-schema-evolution'));
    expect(all.length).toBe(4);
    const s0: number[][] = [];
    const s1: number[][] = [];
    for (const path of all) {
      const footer = await readParquetFooter(io.asFileIO(), path);
      const isSchema0 = footer.topLevelFieldIds.has('b');
      const fields = isSchema0 ? schema0 : schema1;
      // Field ids in the file are the schema's ids (checked through the footer, not our reader).
      for (const f of fields) expect(footer.topLevelFieldIds.get(f.name)).toBe(f.id);
      const { rows, schema } = await read(
        io,
        path,
        fields,
        fields.map((f) => f.name).filter((n) => n !== 'key1'),
      );
      expect(schema!.fields.map((f) => f.name)).not.toContain('key1');
      for (const r of rows) (isSchema0 ? s0 : s1).push(fields.filter((f) => f.name !== 'key1').map((f) => r[f.name] as number));
    }
    const sort = (x: number[][]) => x.sort((p, q) => p[0]! - q[0]! || p[1]! - q[1]!);
    // README snapshot 1 rows (key0,key1,a,b,c,d,k) without key1.
    expect(sort(s0)).toEqual(
      sort([
        [0, 12, 13, 14, 15, 16],
        [0, 22, 23, 24, 25, 26],
        [0, 32, 33, 34, 35, 36],
        [1, 42, 43, 44, 45, 46],
        [1, 52, 53, 54, 55, 56],
      ]),
    );
    // Snapshot 2 rows of README's schema-1 table (key0, k, c, d, a, e).
    expect(sort(s1)).toEqual(
      sort([
        [0, 66, 63, 517, 65, 618],
        [0, 76, 73, 527, 75, 628],
        [0, 86, 83, 537, 85, 638],
        [1, 96, 93, 547, 95, 648],
        [1, 106, 103, 557, 105, 658],
      ]),
    );
  });

  it('pk tables: every data file conforms to the key/value layout (Int8 _VALUE_KIND, key ids)', async () => {
    const value: DataField[] = [
      { id: 0, name: 'f0', type: { root: 'VARCHAR', nullable: false, length: 2147483647 } },
      { id: 1, name: 'f1', type: INT(false) },
      { id: 2, name: 'f2', type: INT(false) },
      { id: 3, name: 'f3', type: { root: 'DOUBLE', nullable: true } },
    ];
    const kv = keyValueFileFields([value[0]!, value[2]!], value);
    const paths = [...files(join(FIXTURES, 'pk-mor')), ...files(join(FIXTURES, 'pk-dv'))];
    expect(paths.length).toBe(15);
    const names = new Set<string>();
    for (const path of paths) {
      const footer = await readParquetFooter(io.asFileIO(), path);
      for (const f of kv) expect(footer.topLevelFieldIds.get(f.name)).toBe(f.id);
      const { rows, schema } = await read(io, path, kv, ['_KEY_f0', '_SEQUENCE_NUMBER', '_VALUE_KIND', 'f0', 'f3']);
      expect(String(schema!.fields[2]!.type)).toBe('Int8');
      expect(rows.length).toBe(Number(footer.numRows));
      for (const r of rows) {
        expect(r._KEY_f0).toBe(r.f0);
        expect([0, 1, 2, 3]).toContain(r._VALUE_KIND);
        names.add(r.f0 as string);
      }
    }
    expect([...names].sort()).toEqual(
      [
        'Alex',
        'Alice',
        'Bob',
        'David',
        'Emily',
        'Lucy',
        'Marco',
        'Marco2',
        'Paul',
        'Skye',
        'Skye2',
        'Tony',
        'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.',
      ].sort(),
    );
  });
});

describe('INT96 timestamps (Java TIMESTAMP(7..9))', () => {
  const millis = [-1n, -86_400_001n, 0n, 1_700_000_000_123n, -2_208_988_800_000n];
  const expected = millis.map((m) => m * 1_000_000n + 456_789n);

  it('decodes the signed nanos-of-day formula exactly', () => {
    millis.forEach((m, i) => {
      const v = javaInt96(m, 456_789);
      const bytes = new Uint8Array(12);
      new DataView(bytes.buffer).setBigInt64(0, v.nanosOfDay, true);
      new DataView(bytes.buffer).setInt32(8, v.julianDay, true);
      expect(decodeInt96(bytes)).toBe(expected[i]);
    });
    // Pre-1970 values really have a negative nanosOfDay in Java's encoding.
    expect(javaInt96(-1n, 0).nanosOfDay).toBeLessThan(0n);
  });

  it('parquet-wasm reads pre-1970 INT96 written the Java way as exact Timestamp[ns]', async () => {
    const bytes = int96ParquetFile('ts', 4, [...millis.map((m) => javaInt96(m, 456_789)), null]);
    const io = new CountingFileIO().put('int96.parquet', bytes);
    const fields: DataField[] = [{ id: 4, name: 'ts', type: { root: 'TIMESTAMP', nullable: true, precision: 9 } }];
    const out: (bigint | null)[] = [];
    for await (const b of readParquetFile(io.asFileIO(), 'int96.parquet')) {
      const c = conformToPaimonTypes(b, fields);
      const col = c.getChild('ts')!;
      expect((col.type as arrow.Timestamp).unit).toBe(arrow.TimeUnit.NANOSECOND);
      for (let i = 0; i < col.length; i++) out.push(col.isValid(i) ? (col.data[0]!.values as BigInt64Array)[i]! : null);
    }
    expect(out).toEqual([...expected, null]);
  });
});

describe('DuckDB reads what we write', async () => {
  let duck: typeof import('@duckdb/node-api') | undefined;
  try {
    duck = await import('@duckdb/node-api');
  } catch {
    console.warn('[skip] @duckdb/node-api not installed; DuckDB interop test skipped');
  }

  it.skipIf(!duck)('sees field ids, logical types and values', async () => {
    const fields: DataField[] = [
      { id: 11, name: 'id', type: { root: 'BIGINT', nullable: false } },
      { id: 12, name: 'name', type: { root: 'VARCHAR', nullable: true, length: 2147483647 } },
      { id: 13, name: 'amount', type: { root: 'DECIMAL', nullable: true, precision: 38, scale: 2 } },
      { id: 14, name: 'ts', type: { root: 'TIMESTAMP', nullable: true, precision: 6 } },
      { id: 15, name: 'tags', type: { root: 'ARRAY', nullable: true, element: { root: 'INT', nullable: true } } },
    ];
    const schema = toArrowSchema(fields);
    const ft = (i: number) => schema.fields[i]!.type;
    const dec = new Uint32Array(8);
    // 10^38-1 = 0x4B3B4CA85A86C47A098A223FFFFFFFFF, little-endian words; second row -1.
    const big = 10n ** 38n - 1n;
    for (let w = 0; w < 4; w++) dec[w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
    dec.fill(0xffffffff, 4);
    const children = [
      arrow.makeData({ type: ft(0), length: 2, nullCount: 0, data: BigInt64Array.from([1n, -2n]) }),
      utf8Vector(['Zoë', null]).data[0]!,
      arrow.makeData({ type: ft(2), length: 2, nullCount: 0, data: dec }),
      arrow.makeData({ type: ft(3), length: 2, nullCount: 0, data: BigInt64Array.from([-1n, 1700000000123456n]) }),
      arrow.vectorFromArray([[1, null], null], ft(4)).data[0]!,
    ];
    const bytes = writeParquetFile([
      new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: 2, nullCount: 0, children })),
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-pq-'));
    const path = join(dir, 'x.parquet');
    writeFileSync(path, bytes);
    const inst = await duck!.DuckDBInstance.create(':memory:');
    const conn = await inst.connect();
    const ids = (
      await conn.runAndReadAll(`SELECT name, field_id, logical_type::VARCHAR AS lt FROM parquet_schema('${path}')`)
    ).getRowObjectsJson();
    const byName = new Map(ids.map((r) => [r.name as string, r]));
    for (const f of fields) expect(Number(byName.get(f.name)!.field_id)).toBe(f.id);
    expect(byName.has('element')).toBe(true);
    const rows = (
      await conn.runAndReadAll(
        `SELECT id, name, amount::VARCHAR AS amount, epoch_us(ts)::VARCHAR AS ts, tags FROM read_parquet('${path}') ORDER BY id`,
      )
    ).getRowObjectsJson();
    expect(rows).toEqual([
      { id: '-2', name: null, amount: '-0.01', ts: '1700000000123456', tags: null },
      { id: '1', name: 'Zoë', amount: '999999999999999999999999999999999999.99', ts: '-1', tags: [1, null] },
    ]);
    conn.closeSync?.();
  });
});
