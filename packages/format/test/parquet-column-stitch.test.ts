/**
 * One row group encoded column-split on several workers and stitched: every column type (nested
 * included, nulls, dictionary and plain pages) reads back as the one-file encoding of the same
 * rows through parquet-wasm, hyparquet and DuckDB; each column chunk is the one-file encoding's
 * chunk byte for byte at its new offset, with statistics, page indexes and file metadata intact;
 * parts that do not fit together are refused with a typed error.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as arrow from 'apache-arrow';
import { parquetMetadata, parquetReadObjects, readOffsetIndex } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { arrowTableFromCanon, canonicalRows, type CanonRow } from '../../../test/support/arrow-canon.js';
import { ALL_TYPES, TYPE_ROWS, withNulls } from '../../../test/support/all-types.js';
import {
  encodeParquetRowGroupsAsync,
  FormatError,
  ParquetRowGroupStream,
  scanIpcStream,
  parseTypeString,
  readParquetFile,
  readParquetFooter,
  writeParquetFile,
  type DataField,
} from '../src/index.js';
import { encodeColumnSplit, planColumnSplit } from '../src/parquet-column-split.js';
import { stitchParquetColumns } from '../src/parquet-concat.js';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { trackedPools } from './helpers/test-pools.js';

type Duck = typeof import('@duckdb/node-api');
let duck: Duck | undefined;
try {
  duck = await import('@duckdb/node-api');
} catch (e) {
  console.warn(`[tidemark] SKIPPED DuckDB reads of stitched files: @duckdb/node-api cannot be loaded (${(e as Error).message})`);
}

const pool = trackedPools();

/** Every type of all-types.ts, plus a unique string column large enough to fall back from dictionary to plain pages. */
const FIELDS: DataField[] = [
  ...ALL_TYPES.fields.map((f, i) => ({ id: i + 1, name: f.name, type: parseTypeString(f.type as string) }) as DataField),
  { id: 100, name: 'u', type: parseTypeString('STRING') } as DataField,
];
const ROWS = 24_000;

/** TYPE_ROWS repeated (nulls everywhere nullable included), ids made unique, `u` unique 48-char strings. */
function rows(): CanonRow[] {
  const base = withNulls(ALL_TYPES.fields, TYPE_ROWS);
  return Array.from({ length: ROWS }, (_, i) => ({
    ...base[i % base.length]!,
    id: i,
    u: i % 97 === 0 ? null : `${String(i).padStart(8, '0')}-${'x'.repeat(30)}-${(i * 7919) % 100_003}`,
  }));
}

/** The input as several record batches (group boundaries inside batches do not matter to a column split). */
function batches(): arrow.RecordBatch[] {
  const table = arrowTableFromCanon(FIELDS, rows());
  const b = table.batches[0]!;
  return [b.slice(0, 5_000), b.slice(5_000, 17_000), b.slice(17_000, ROWS)];
}

async function parquetWasmRows(bytes: Uint8Array): Promise<CanonRow[]> {
  const io = new CountingFileIO().put('f', bytes).asFileIO();
  const out: arrow.RecordBatch[] = [];
  for await (const b of readParquetFile(io, 'f', { pool: false })) out.push(b);
  return canonicalRows(new arrow.Table(out), FIELDS);
}

/** The raw footer as hyparquet reads it. */
function meta(bytes: Uint8Array) {
  return parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

function chunkBytes(
  bytes: Uint8Array,
  c: { meta_data?: { data_page_offset: bigint; dictionary_page_offset?: bigint; total_compressed_size: bigint } },
): Uint8Array {
  const m = c.meta_data!;
  const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
  return bytes.subarray(start, start + Number(m.total_compressed_size));
}

describe('column-split encoding of one row group', () => {
  const input = batches();
  let whole: Uint8Array;
  let stitched: Uint8Array;
  let dir: string;

  beforeAll(async () => {
    whole = writeParquetFile(input, { compression: 'snappy', rowGroupSize: ROWS });
    const p = encodeColumnSplit(pool(2), input, { compression: 'snappy' });
    expect(p).not.toBeNull();
    stitched = await p!;
    dir = await mkdtemp(join(tmpdir(), 'tidemark-column-stitch-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('splits the columns between the workers by estimated cost, each part in schema order', () => {
    const plan = planColumnSplit(input, 2)!;
    expect(plan).toHaveLength(2);
    expect(plan.flat().sort((a, b) => a - b)).toEqual(FIELDS.map((_, i) => i));
    for (const part of plan) expect(part).toEqual([...part].sort((a, b) => a - b));
    // `s` (5,000-character strings in a quarter of the rows) outweighs all other columns together.
    const heavy = FIELDS.findIndex((f) => f.name === 's');
    expect(plan).toContainEqual([heavy]);
    expect(planColumnSplit(input, 1)).toBeNull();
    expect(planColumnSplit([input[0]!.slice(0, 100)], 2)).toBeNull(); // too few rows to pay
    expect(planColumnSplit([input[0]!.selectAt([0])], 2)).toBeNull(); // one column
  });

  it('reads back through parquet-wasm as the one-file encoding, field by field', async () => {
    const expected = await parquetWasmRows(whole);
    const got = await parquetWasmRows(stitched);
    expect(got).toHaveLength(ROWS);
    for (const f of FIELDS)
      expect(
        got.map((r) => r[f.name]),
        f.name,
      ).toEqual(expected.map((r) => r[f.name]));
  });

  it('reads back through hyparquet as the one-file encoding', async () => {
    const read = (b: Uint8Array) => parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer });
    const expected = await read(whole);
    const got = await read(stitched);
    expect(got).toHaveLength(ROWS);
    for (const f of FIELDS)
      expect(
        got.map((r) => r[f.name]),
        f.name,
      ).toEqual(expected.map((r) => r[f.name]));
  });

  it.skipIf(!duck)('reads back through DuckDB as the one-file encoding', async () => {
    await writeFile(join(dir, 'whole.parquet'), whole);
    await writeFile(join(dir, 'stitched.parquet'), stitched);
    const instance = await duck!.DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const read = async (name: string) =>
        (await conn.runAndReadAll(`SELECT * FROM read_parquet('${join(dir, name)}') ORDER BY id`)).getRowObjectsJson();
      const expected = await read('whole.parquet');
      const got = await read('stitched.parquet');
      expect(got).toHaveLength(ROWS);
      expect(got).toEqual(expected);
      const same = await conn.runAndReadAll(
        `SELECT count(*)::INT AS n FROM (SELECT * FROM read_parquet('${join(dir, 'whole.parquet')}') EXCEPT ALL ` +
          `SELECT * FROM read_parquet('${join(dir, 'stitched.parquet')}'))`,
      );
      expect(same.getRowObjectsJson()).toEqual([{ n: 0 }]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('holds one row group whose chunks are the one-file chunks byte for byte, laid out in column order', () => {
    const a = meta(whole);
    const b = meta(stitched);
    expect(b.row_groups).toHaveLength(1);
    expect(b.num_rows).toBe(BigInt(ROWS));
    expect(b.schema).toEqual(a.schema);
    expect(b.key_value_metadata).toEqual(a.key_value_metadata);
    expect(b.key_value_metadata?.some((kv) => kv.key === 'ARROW:schema')).toBe(true);
    expect(b.created_by).toBe(a.created_by);
    const [ga, gb] = [a.row_groups[0]!, b.row_groups[0]!];
    expect(gb.num_rows).toBe(ga.num_rows);
    expect(gb.total_byte_size).toBe(ga.total_byte_size);
    expect(gb.columns).toHaveLength(ga.columns.length);
    let next = 4;
    for (const [i, cb] of gb.columns.entries()) {
      const ca = ga.columns[i]!;
      const path = cb.meta_data!.path_in_schema.join('.');
      expect(path).toBe(ca.meta_data!.path_in_schema.join('.'));
      expect(chunkBytes(stitched, cb), path).toEqual(chunkBytes(whole, ca));
      expect(Number(cb.meta_data!.dictionary_page_offset ?? cb.meta_data!.data_page_offset), path).toBe(next);
      next += Number(cb.meta_data!.total_compressed_size);
      const { data_page_offset, dictionary_page_offset, ...rest } = cb.meta_data!;
      const { data_page_offset: da, dictionary_page_offset: dd, ...restA } = ca.meta_data!;
      expect(rest, path).toEqual(restA); // statistics, encodings, sizes, value counts
      expect(data_page_offset - (dictionary_page_offset ?? data_page_offset)).toBe(da - (dd ?? da));
    }
    // Both kinds of pages are there: dictionary-encoded columns and the unique strings in plain pages.
    const encodings = (name: string) => gb.columns.find((c) => c.meta_data!.path_in_schema[0] === name)!.meta_data!.encodings;
    expect(encodings('u')).toContain('PLAIN');
    expect(gb.columns.some((c) => c.meta_data!.dictionary_page_offset !== undefined)).toBe(true);
  });

  it('moves the offset indexes with the pages when the writer wrote them', async () => {
    const b = meta(stitched);
    const chunks = b.row_groups[0]!.columns.filter((c) => c.offset_index_offset !== undefined);
    // parquet-wasm writes an offset index for every column chunk.
    expect(chunks).toHaveLength(b.row_groups[0]!.columns.length);
    for (const c of chunks) {
      const at = Number(c.offset_index_offset);
      const index = readOffsetIndex({ view: new DataView(stitched.buffer, stitched.byteOffset + at, c.offset_index_length!), offset: 0 });
      expect(index.page_locations[0]!.offset).toBe(c.meta_data!.data_page_offset);
      const end = BigInt(Number(c.meta_data!.dictionary_page_offset ?? c.meta_data!.data_page_offset)) + c.meta_data!.total_compressed_size;
      for (const p of index.page_locations) expect(p.offset + BigInt(p.compressed_page_size) <= end).toBe(true);
    }
    // parquet-wasm's statistics (the manifest's source) are unchanged too.
    const io = new CountingFileIO().put('w', whole).put('s', stitched).asFileIO();
    const stats = (f: Awaited<ReturnType<typeof readParquetFooter>>): unknown[] =>
      f.rowGroups.map((g) => [g.numRows, g.columns.map((c) => [c.column.path.join('.'), c.min, c.max, c.nullCount, c.numValues])]);
    expect(stats(await readParquetFooter(io, 's'))).toEqual(stats(await readParquetFooter(io, 'w')));
  });

  it('encodes a file of up to the row-group size as one column-split group, zstd too', async () => {
    const file = await encodeParquetRowGroupsAsync(input, { pool: pool(2), compression: 'zstd' });
    expect(meta(file).row_groups).toHaveLength(1);
    const one = writeParquetFile(input, { compression: 'zstd', rowGroupSize: ROWS });
    const expected = await parquetWasmRows(one);
    const got = await parquetWasmRows(file);
    for (const f of FIELDS)
      expect(
        got.map((r) => r[f.name]),
        f.name,
      ).toEqual(expected.map((r) => r[f.name]));
    // Three groups on two workers: the first two whole, the third (it would run alone) column-split.
    const three = await encodeParquetRowGroupsAsync(input, { pool: pool(2), compression: 'zstd', rowGroupRows: 9_000 });
    expect(meta(three).row_groups.map((g) => g.num_rows)).toEqual([9000n, 9000n, 6000n]);
    const got3 = await parquetWasmRows(three);
    for (const f of FIELDS)
      expect(
        got3.map((r) => r[f.name]),
        f.name,
      ).toEqual(expected.map((r) => r[f.name]));
  });

  it('encodes the last group of a streamed file column-split, from Arrow rows and from IPC streams passed on', async () => {
    const expected = await parquetWasmRows(whole);
    for (const viaIpc of [false, true]) {
      const p = pool(2);
      const calls = { whole: 0, segments: 0 };
      const encodeIpc = p.encodeIpc.bind(p);
      const encodeIpcSegments = p.encodeIpcSegments.bind(p);
      p.encodeIpc = (ipc, settings) => {
        calls.whole++;
        return encodeIpc(ipc, settings);
      };
      p.encodeIpcSegments = (segments, settings) => {
        calls.segments++;
        return encodeIpcSegments(segments, settings);
      };
      // The rows never fill a group: the one group is the file's last, cut by finish().
      const stream = new ParquetRowGroupStream({ groupRows: ROWS + 1, pool: p, createdBy: `stream ${viaIpc}` });
      for (const b of input) {
        if (viaIpc) await stream.addIpc(scanIpcStream(arrow.tableToIPC(new arrow.Table([b]), 'stream'))!);
        else await stream.add(b);
      }
      expect(calls).toEqual({ whole: 0, segments: 0 });
      const file = await stream.finish();
      // The template of the whole schema, then one part per worker; nothing encoded whole.
      expect(calls).toEqual({ whole: 3, segments: 0 });
      const m = meta(file);
      expect(m.row_groups.map((g) => g.num_rows)).toEqual([BigInt(ROWS)]);
      expect(m.created_by).toBe(`stream ${viaIpc}`);
      const got = await parquetWasmRows(file);
      for (const f of FIELDS)
        expect(
          got.map((r) => r[f.name]),
          `${f.name} (ipc: ${viaIpc})`,
        ).toEqual(expected.map((r) => r[f.name]));
    }
  });

  it('splits a full group of a stream only when a worker would otherwise idle', async () => {
    const expected = await parquetWasmRows(whole);
    for (const busy of [false, true]) {
      const p = pool(2);
      const columns: number[] = []; // the column count of each encode job
      const encodeIpc = p.encodeIpc.bind(p);
      p.encodeIpc = (ipc, settings) => {
        columns.push(arrow.tableFromIPC(ipc).schema.fields.length);
        return encodeIpc(ipc, settings);
      };
      const stream = new ParquetRowGroupStream({ groupRows: 20_000, pool: p });
      await stream.add(input[0]!);
      await stream.add(input[1]!);
      // Both workers have a job in hand when the group fills up (its cut runs before add() awaits anything).
      const filler = (): Promise<Uint8Array> =>
        encodeIpc(arrow.tableToIPC(new arrow.Table([input[0]!]), 'stream'), { codec: 0, createdBy: 'filler' });
      const jobs = busy ? [filler(), filler()] : [];
      await stream.add(input[2]!);
      await Promise.all(jobs);
      const file = await stream.finish();
      const all = FIELDS.length;
      const parts = columns.filter((n) => n < all);
      if (busy)
        expect(parts).toEqual([]); // the group went to the pool whole
      else expect(parts.reduce((a, b) => a + b, 0)).toBe(all); // its columns went to the workers in parts
      expect(meta(file).row_groups.map((g) => g.num_rows)).toEqual([20_000n, 4_000n]);
      const got = await parquetWasmRows(file);
      for (const f of FIELDS)
        expect(
          got.map((r) => r[f.name]),
          `${f.name} (busy: ${busy})`,
        ).toEqual(expected.map((r) => r[f.name]));
    }
  });

  it('refuses parts that do not fit together, naming the part', async () => {
    const p = pool(2);
    const plan = planColumnSplit(input, 2)!;
    const template = writeParquetFile(new arrow.Table(input[0]!.schema), { compression: 'snappy' });
    const part = (fields: number[], b = input) =>
      writeParquetFile(new arrow.Table(b).selectAt(fields), { compression: 'snappy', rowGroupSize: ROWS });
    const [a, b] = plan.map((f) => part(f));
    expect(
      stitchParquetColumns(template, [
        { bytes: a!, fields: plan[0]! },
        { bytes: b!, fields: plan[1]! },
      ]).length,
    ).toBeGreaterThan(0);
    expect(() => stitchParquetColumns(template, [{ bytes: a!, fields: plan[0]! }])).toThrow(/no part holds field/);
    expect(() =>
      stitchParquetColumns(template, [
        { bytes: a!, fields: plan[0]! },
        { bytes: a!, fields: plan[0]! },
      ]),
    ).toThrow(/also in part 0/);
    const short = part(plan[1]!, [input[0]!]);
    expect(() =>
      stitchParquetColumns(template, [
        { bytes: a!, fields: plan[0]! },
        { bytes: short, fields: plan[1]! },
      ]),
    ).toThrow(/part 1 has 5000 rows, part 0 has 24000/);
    // Field lists that do not match the part's schema.
    expect(() =>
      stitchParquetColumns(template, [
        { bytes: b!, fields: plan[0]! },
        { bytes: a!, fields: plan[1]! },
      ]),
    ).toThrow(FormatError);
    expect(() =>
      stitchParquetColumns(template, [
        { bytes: a!.subarray(0, 100), fields: plan[0]! },
        { bytes: b!, fields: plan[1]! },
      ]),
    ).toThrow(/part 0 is not a Parquet file/);
    await p.close();
  });
});
