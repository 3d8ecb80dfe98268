/**
 * DuckDB, an independent Parquet reader, reads the data files tidemark wrote for a table with every
 * primitive type and sees the same values as tidemark's own reader and as the hand-written
 * expected rows (column by column: decimals as text, timestamps as epoch values, binaries as hex).
 *
 * Local disk only: DuckDB cannot reach the test S3 server without its httpfs extension, which is
 * not available offline. Skipped with a notice when @duckdb/node-api cannot be loaded.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import type { DataType, TableSchema } from '@tidemark/format';
import { FileSystemCatalog, type Table, type TableSpec } from '@tidemark/core';
import { arrowTableFromCanon, canonicalRows, sortBy, type Canon, type CanonRow } from './support/arrow-canon.js';
import { ALL_TYPES, I64_MAX, TYPE_ROWS, withNulls } from './support/all-types.js';

type Duck = typeof import('@duckdb/node-api');
let duck: Duck | undefined;
try {
  duck = await import('@duckdb/node-api');
} catch (e) {
  console.warn(`[tidemark] SKIPPED DuckDB interop of written tables: @duckdb/node-api cannot be loaded (${(e as Error).message})`);
}

/** The primitive (non-nested) columns of ALL_TYPES. */
const PRIMITIVES: TableSpec = { fields: ALL_TYPES.fields.filter((f) => typeof f.type === 'string' && !f.type.includes('<')) };

/**
 * DuckDB has no nanosecond TIMESTAMP WITH TIME ZONE: it reads TIMESTAMP_LTZ(9) files as
 * microseconds (truncating toward zero) and takes ±(2^63-1) as ±infinity there. Rows 1 and 2 use
 * the largest finite values instead for that column.
 */
const ROWS: CanonRow[] = TYPE_ROWS.map((r) => {
  const row: CanonRow = {};
  for (const f of PRIMITIVES.fields) if (r[f.name] !== undefined) row[f.name] = r[f.name]!;
  if (r['ltz9'] === I64_MAX) row['ltz9'] = I64_MAX - 1n;
  if (r['ltz9'] === -I64_MAX) row['ltz9'] = -(I64_MAX - 1n);
  return row;
});

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();

/**
 * The DuckDB select expression for a column, and the projection of a canonical value into what
 * that expression returns through `getRowObjects()`.
 */
function duckColumn(name: string, type: DataType): { sql: string; project: (v: Canon) => unknown } {
  const q = `"${name}"`;
  const same = (v: Canon): unknown => v;
  switch (type.root) {
    case 'BOOLEAN':
    case 'DOUBLE':
    case 'CHAR':
    case 'VARCHAR':
    case 'BIGINT':
      return { sql: q, project: same };
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
      return { sql: `${q}::INTEGER`, project: same };
    case 'FLOAT':
      return { sql: `${q}::DOUBLE`, project: same };
    case 'DECIMAL':
      return { sql: `${q}::VARCHAR`, project: same };
    case 'BINARY':
    case 'VARBINARY':
      return { sql: `hex(${q})`, project: (v) => (v === null ? null : hex(v as Uint8Array)) };
    case 'DATE':
      return { sql: `(${q} - DATE '1970-01-01')::INTEGER`, project: same };
    case 'TIME':
      return { sql: `epoch_ms(${q})::INTEGER`, project: same };
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      if (type.precision <= 3) return { sql: `epoch_ms(${q})`, project: same };
      if (type.precision <= 6) return { sql: `epoch_us(${q})`, project: same };
      if (type.root === 'TIMESTAMP') return { sql: `epoch_ns(${q})`, project: same };
      return { sql: `epoch_us(${q})`, project: (v) => (v === null ? null : (v as bigint) / 1000n) };
    }
    default:
      throw new Error(`no DuckDB projection for column '${name}' (${type.root})`);
  }
}

describe.skipIf(!duck)('DuckDB reads the Parquet files of a written table (local disk)', () => {
  let dir: string;
  let table: Table;
  let schema: TableSchema;
  let files: string[];
  let conn: Awaited<ReturnType<Awaited<ReturnType<Duck['DuckDBInstance']['create']>>['connect']>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tidemark-write-duckdb-'));
    const catalog = new FileSystemCatalog(join(dir, 'wh'), { fileIO: new LocalFileIO() });
    schema = await catalog.createTable('db.primitives', PRIMITIVES);
    table = await catalog.getTable('db.primitives');
    // One file written from row objects (ids 1–4), one from an Arrow table (ids 5–7).
    await table.append(ROWS.slice(0, 4));
    await table.append(arrowTableFromCanon(schema.fields, withNulls(schema.fields, ROWS.slice(4))));
    files = (await table.newRead().plan()).splits.flatMap((s) => s.files.map((f) => f.path));
    const instance = await duck!.DuckDBInstance.create(':memory:');
    conn = await instance.connect();
  });

  afterAll(async () => {
    conn?.closeSync?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sees each Paimon field id on its column', async () => {
    expect(files).toHaveLength(2);
    for (const path of files) {
      const rows = (
        await conn.runAndReadAll(`SELECT name, field_id FROM parquet_schema('${path}') WHERE field_id IS NOT NULL`)
      ).getRowObjectsJson();
      expect(rows.map((r) => [r['name'], Number(r['field_id'])])).toEqual(schema.fields.map((f) => [f.name, f.id]));
    }
  });

  it('reads the same values as tidemark, column by column', async () => {
    const columns = schema.fields.map((f) => ({ field: f, ...duckColumn(f.name, f.type) }));
    const list = files.map((p) => `'${p}'`).join(', ');
    const sql = `SELECT ${columns.map((c) => `${c.sql} AS "${c.field.name}"`).join(', ')} FROM read_parquet([${list}]) ORDER BY id`;
    const fromDuck = (await conn.runAndReadAll(sql)).getRowObjects();
    const fromTidemark = sortBy(canonicalRows(await table.newRead().toArrowTable(), schema.fields), 'id');
    const expected = withNulls(schema.fields, ROWS);
    expect(fromDuck).toHaveLength(expected.length);
    expect(fromTidemark).toEqual(expected);
    for (const c of columns) {
      const name = c.field.name;
      const duckValues = fromDuck.map((r) => r[name] ?? null);
      expect(duckValues, `column ${name}: DuckDB vs tidemark`).toEqual(fromTidemark.map((r) => c.project(r[name]!)));
      expect(duckValues, `column ${name}: DuckDB vs expected`).toEqual(expected.map((r) => c.project(r[name]!)));
    }
  });
});
