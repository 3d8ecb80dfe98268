/**
 * One Parquet file encoded as row groups on several workers (encodeParquetRowGroupsAsync, joined by
 * concatParquetFiles) is the file parquet-wasm writes itself with the same row-group size: same
 * rows in the same order, same groups, same per-group statistics; and its row groups decode on
 * their own (ParquetDataFile) in workers and on this thread alike.
 */
import * as arrow from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';

import {
  concatParquetFiles,
  encodeParquetRowGroupsAsync,
  ParquetDataFile,
  ParquetWorkerPool,
  readParquetFile,
  readParquetFooter,
  writeParquetFile,
} from '../src/index.js';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { sampleBatches } from './helpers/sample-batches.js';

function table(rows: number, batchRows: number): arrow.Table {
  return new arrow.Table(sampleBatches(rows, batchRows));
}

async function rowsOf(bytes: Uint8Array, pool: ParquetWorkerPool | false): Promise<unknown[]> {
  const io = new CountingFileIO().put('f', bytes).asFileIO();
  const out: unknown[] = [];
  for await (const b of readParquetFile(io, 'f', { pool })) for (const r of b) out.push(r?.toJSON());
  return out;
}

const pools: ParquetWorkerPool[] = [];
const pool = (size: number): ParquetWorkerPool => {
  const p = new ParquetWorkerPool({ size });
  pools.push(p);
  return p;
};
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('encodeParquetRowGroupsAsync', () => {
  it('writes the file parquet-wasm writes with the same row-group size: rows, groups and per-group statistics', async () => {
    const t = table(10_500, 1_700); // groups of 2,000 rows cut across input batches, last group 500 rows
    const parallel = await encodeParquetRowGroupsAsync(t, { rowGroupRows: 2_000, pool: pool(2) });
    const single = writeParquetFile(t, { rowGroupSize: 2_000 });
    const io = new CountingFileIO().put('p', parallel).put('s', single).asFileIO();
    const [fp, fs] = [await readParquetFooter(io, 'p'), await readParquetFooter(io, 's')];
    expect(fp.numRows).toBe(10_500n);
    expect(fp.rowGroups.map((g) => g.numRows)).toEqual([2000n, 2000n, 2000n, 2000n, 2000n, 500n]);
    expect(fp.rowGroups.map((g) => g.numRows)).toEqual(fs.rowGroups.map((g) => g.numRows));
    const stats = (f: typeof fp): unknown[] =>
      f.rowGroups.map((g) => g.columns.map((c) => [c.column.path.join('.'), c.min, c.max, c.nullCount, c.numValues]));
    expect(stats(fp)).toEqual(stats(fs));
    expect([...fp.topLevelFieldIds]).toEqual([
      ['id', 1],
      ['name', 2],
      ['amount', 3],
    ]);
    const expected = await rowsOf(single, false);
    expect(expected).toHaveLength(10_500);
    expect(await rowsOf(parallel, false)).toEqual(expected);
    expect(await rowsOf(parallel, pool(2))).toEqual(expected);
  });

  it('decodes any single row group of the joined file, in a worker and on this thread alike', async () => {
    const t = table(6_000, 6_000);
    const bytes = await encodeParquetRowGroupsAsync(t, { rowGroupRows: 2_500, pool: pool(2) });
    const io = new CountingFileIO().put('f', bytes).asFileIO();
    const file = await ParquetDataFile.open(io, 'f', { fileSize: bytes.length, rowCount: 6_000 });
    expect(file.rowGroups).toEqual([
      { rows: 2500, firstRow: 0 },
      { rows: 2500, firstRow: 2500 },
      { rows: 1000, firstRow: 5000 },
    ]);
    const ids = (batches: arrow.RecordBatch[]): bigint[] => batches.flatMap((b) => [...(b.getChild('id')!.toArray() as BigInt64Array)]);
    const w = pool(1);
    for (const g of [2, 0, 1]) {
      const want = Array.from({ length: file.rowGroups[g]!.rows }, (_, i) => BigInt(file.rowGroups[g]!.firstRow + i));
      expect(ids(await file.decode([g], { columns: ['id'], pool: w }))).toEqual(want);
      expect(ids(await file.decode([g], { columns: ['id'], pool: false }))).toEqual(want);
    }
  });

  it('cuts a file into equal row groups when it cuts for the workers, not at rowGroupRows', async () => {
    // Columns split between the workers keep the file in one group (the same rows, see
    // parquet-column-stitch.test.ts); a file of one column is cut into a group per worker instead.
    const t = table(200_001, 50_000);
    const split = await encodeParquetRowGroupsAsync(t, { pool: pool(2) });
    const splitIo = new CountingFileIO().put('f', split).asFileIO();
    expect((await readParquetFooter(splitIo, 'f')).rowGroups.map((g) => g.numRows)).toEqual([200_001n]);
    const oneColumn = t.selectAt([0]);
    const cut = await encodeParquetRowGroupsAsync(oneColumn, { pool: pool(2) });
    const cutIo = new CountingFileIO().put('f', cut).asFileIO();
    expect((await readParquetFooter(cutIo, 'f')).rowGroups.map((g) => g.numRows)).toEqual([100_001n, 100_000n]);
    const bytes = await encodeParquetRowGroupsAsync(t, { pool: pool(2), rowGroupRows: 150_000 });
    const io = new CountingFileIO().put('f', bytes).asFileIO();
    const footer = await readParquetFooter(io, 'f');
    // Groups of rowGroupRows: one per worker, each encoded whole.
    expect(footer.rowGroups.map((g) => g.numRows)).toEqual([150_000n, 50_001n]);
    const file = await ParquetDataFile.open(io, 'f', { rowCount: 200_001 });
    const batches = await file.decode([0, 1], { columns: ['id', 'name'], pool: pool(2) });
    const ids = batches.flatMap((b) => [...(b.getChild('id')!.toArray() as BigInt64Array)]);
    expect(ids).toHaveLength(200_001);
    expect(ids.every((id, i) => id === BigInt(i))).toBe(true);
    expect(
      batches
        .at(-1)!
        .getChild('name')!
        .get(batches.at(-1)!.numRows - 1),
    ).toBe(`n${(200_000 * 7919) % 100_003}`);
  });

  it('takes the single-file path for one group or no workers', async () => {
    const t = table(1_000, 1_000);
    const one = await encodeParquetRowGroupsAsync(t, { rowGroupRows: 5_000, pool: pool(2) });
    expect(Buffer.from(one).equals(Buffer.from(writeParquetFile(t, { rowGroupSize: 5_000 })))).toBe(true);
    const inThread = await encodeParquetRowGroupsAsync(t, { rowGroupRows: 300, pool: false });
    expect(Buffer.from(inThread).equals(Buffer.from(writeParquetFile(t, { rowGroupSize: 300 })))).toBe(true);
    await expect(encodeParquetRowGroupsAsync(t, { rowGroupRows: 0 })).rejects.toThrow(/rowGroupRows must be a positive integer, got 0/);
  });
});

describe('concatParquetFiles', () => {
  it('refuses parts of different schemas and bytes that are not Parquet, naming the part', () => {
    const a = writeParquetFile(table(10, 10));
    const b = writeParquetFile(arrow.tableFromArrays({ x: Int32Array.from([1, 2]) }));
    expect(() => concatParquetFiles([a, b])).toThrow(/Parquet part 1 has another schema than part 0/);
    expect(() => concatParquetFiles([a, new Uint8Array(20)])).toThrow(/Parquet part 1 is not a Parquet file/);
  });
});
