/**
 * ParquetRowGroupStream: a file whose row groups are encoded on the pool while rows still arrive is
 * the file parquet-wasm writes itself with the same row-group size (rows, order, groups, per-group
 * statistics); the groups waiting for a worker stay bounded; a failed encoding fails the stream
 * with the pool's typed error, and a process that streamed (and aborted) exits on its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import {
  FormatError,
  ParquetEncodeError,
  ParquetRowGroupStream,
  readParquetFile,
  readParquetFooter,
  rowGroupCopyBlocker,
  writeParquetFile,
} from '../src/index.js';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { trackedPools } from './helpers/test-pools.js';
import { sampleBatches } from './helpers/sample-batches.js';

async function rowsOf(bytes: Uint8Array): Promise<unknown[]> {
  const io = new CountingFileIO().put('f', bytes).asFileIO();
  const out: unknown[] = [];
  for await (const b of readParquetFile(io, 'f', { pool: false })) for (const r of b) out.push(r?.toJSON());
  return out;
}

async function streamed(input: readonly arrow.RecordBatch[], stream: ParquetRowGroupStream): Promise<Uint8Array> {
  for (const b of input) await stream.add(b);
  return stream.finish();
}

const pool = trackedPools();

describe('ParquetRowGroupStream', () => {
  it('writes the file parquet-wasm writes with the same row-group size, on workers and on this thread', async () => {
    const input = sampleBatches(10_500, 1_700); // groups of 2,000 cut across batches; the last has 500 rows
    const single = writeParquetFile(input, { rowGroupSize: 2_000 });
    const onWorkers = await streamed(input, new ParquetRowGroupStream({ groupRows: 2_000, pool: pool(2) }));
    const here = await streamed(input, new ParquetRowGroupStream({ groupRows: 2_000, pool: false }));
    const io = new CountingFileIO().put('w', onWorkers).put('h', here).put('s', single).asFileIO();
    const stats = (f: Awaited<ReturnType<typeof readParquetFooter>>): unknown[] =>
      f.rowGroups.map((g) => [g.numRows, g.columns.map((c) => [c.column.path.join('.'), c.min, c.max, c.nullCount, c.numValues])]);
    const expected = stats(await readParquetFooter(io, 's'));
    expect((await readParquetFooter(io, 'w')).rowGroups.map((g) => g.numRows)).toEqual([2000n, 2000n, 2000n, 2000n, 2000n, 500n]);
    expect(stats(await readParquetFooter(io, 'w'))).toEqual(expected);
    expect(stats(await readParquetFooter(io, 'h'))).toEqual(expected);
    const rows = await rowsOf(single);
    expect(rows).toHaveLength(10_500);
    expect(await rowsOf(onWorkers)).toEqual(rows);
    expect(await rowsOf(here)).toEqual(rows);
  });

  it('copies the row groups of an encoded file between the rows added, in order, with their statistics', async () => {
    const all = sampleBatches(9_000, 1_000);
    const rows = await rowsOf(writeParquetFile(all));
    // Rows 3,000–6,999 arrive as a file of two groups; the 500 rows waiting before it become a group of their own.
    const copied = writeParquetFile(sampleBatches(9_000, 1_000).slice(3, 7), { rowGroupSize: 2_000 });
    const s = new ParquetRowGroupStream({ groupRows: 2_500, pool: pool(2) });
    for (const b of all.slice(0, 3)) await s.add(b);
    await s.addParquet(copied, 4_000);
    for (const b of all.slice(7)) await s.add(b);
    expect(s.rows).toBe(9_000);
    const bytes = await s.finish();
    const io = new CountingFileIO().put('f', bytes).put('c', copied).asFileIO();
    const footer = await readParquetFooter(io, 'f');
    expect(footer.rowGroups.map((g) => g.numRows)).toEqual([2500n, 500n, 2000n, 2000n, 2000n]);
    const stats = (groups: Awaited<ReturnType<typeof readParquetFooter>>['rowGroups']): unknown[] =>
      groups.map((g) => g.columns.map((c) => [c.min, c.max, c.nullCount]));
    expect(stats(footer.rowGroups.slice(2, 4))).toEqual(stats((await readParquetFooter(io, 'c')).rowGroups));
    expect(await rowsOf(bytes)).toEqual(rows);
  });

  it('names what keeps the row groups of a file from being copied: small groups, compression, schema', () => {
    const batches = sampleBatches(3_000, 1_000);
    const reference = writeParquetFile(new arrow.Table(batches[0]!.schema), { compression: 'zstd' });
    const file = writeParquetFile(batches, { compression: 'zstd', rowGroupSize: 1_500 });
    expect(rowGroupCopyBlocker(file, reference, 'zstd', 1_500)).toBeNull();
    expect(rowGroupCopyBlocker(file, reference, 'zstd', 1_501)).toBe('row group 0 has 1500 rows, fewer than 1501');
    expect(rowGroupCopyBlocker(writeParquetFile(batches, { compression: 'snappy' }), reference, 'zstd', 1)).toBe(
      'a column chunk is not compressed with zstd',
    );
    const renamed = batches.map(
      (b) => new arrow.RecordBatch(new arrow.Schema(b.schema.fields.map((f, i) => (i === 1 ? f.clone({ name: 'other' }) : f))), b.data),
    );
    expect(rowGroupCopyBlocker(writeParquetFile(renamed, { compression: 'zstd' }), reference, 'zstd', 1)).toBe(
      'its Parquet schema differs from the one the writer encodes',
    );
    expect(() => rowGroupCopyBlocker(new Uint8Array(20), reference, 'zstd', 1)).toThrow(FormatError);
  });

  it('writes one group when the rows never fill one, and counts the rows added', async () => {
    const s = new ParquetRowGroupStream({ groupRows: 1_000, pool: pool(1) });
    for (const b of sampleBatches(999, 400)) await s.add(b);
    expect(s.rows).toBe(999);
    const bytes = await s.finish();
    const footer = await readParquetFooter(new CountingFileIO().put('f', bytes).asFileIO(), 'f');
    expect(footer.rowGroups.map((g) => g.numRows)).toEqual([999n]);
    expect((await rowsOf(bytes)).map((r) => (r as { id: bigint }).id)).toEqual(Array.from({ length: 999 }, (_, i) => BigInt(i)));
  });

  it('keeps at most maxPendingGroups groups waiting for the pool while rows arrive faster than it encodes', async () => {
    const p = pool(1);
    const s = new ParquetRowGroupStream({ groupRows: 500, pool: p, maxPendingGroups: 2 });
    let most = 0;
    for (const b of sampleBatches(20_000, 1_000)) {
      await s.add(b);
      most = Math.max(most, p.pending);
    }
    // 40 groups in all: without the bound they would all have been queued at once.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
    const footer = await readParquetFooter(new CountingFileIO().put('f', await s.finish()).asFileIO(), 'f');
    expect(footer.rowGroups).toHaveLength(40);
  });

  it('fails with the typed error of a worker that crashed on a group', async () => {
    const p = pool(1, new URL('./helpers/crashing-encode-worker.mjs', import.meta.url));
    const s = new ParquetRowGroupStream({ groupRows: 1_000, pool: p, createdBy: 'throw' });
    const run = streamed(sampleBatches(2_500, 700), s);
    await expect(run).rejects.toBeInstanceOf(ParquetEncodeError);
    await expect(run).rejects.toThrow(/Parquet encode worker crashed \(simulated worker crash\)/);
    // The pool goes on with the next file.
    const bytes = await streamed(sampleBatches(1_500, 700), new ParquetRowGroupStream({ groupRows: 1_000, pool: p }));
    expect(await rowsOf(bytes)).toHaveLength(1_500);
  });

  it('rejects bad settings and misuse with errors that say what is wrong', async () => {
    expect(() => new ParquetRowGroupStream({ groupRows: 0 })).toThrow(/groupRows must be a positive integer, got 0/);
    expect(() => new ParquetRowGroupStream({ groupRows: 10, maxPendingGroups: 0, pool: false })).toThrow(
      /maxPendingGroups must be a positive integer, got 0/,
    );
    const bad = new ParquetRowGroupStream({ groupRows: 10, compression: 'brotli' as never, pool: false });
    await expect(bad.add(sampleBatches(10, 10)[0]!)).rejects.toThrow(/unsupported Parquet compression 'brotli'/);
    const empty = new ParquetRowGroupStream({ groupRows: 10, pool: false });
    await expect(empty.finish()).rejects.toBeInstanceOf(FormatError);
    const aborted = new ParquetRowGroupStream({ groupRows: 10, pool: pool(1) });
    for (const b of sampleBatches(35, 10)) await aborted.add(b);
    await aborted.abort();
    await expect(aborted.add(sampleBatches(1, 1)[0]!)).rejects.toThrow(/after finish\(\) or abort\(\)/);
    await expect(aborted.finish()).rejects.toThrow(/after abort/);
  });
});

const distStream = fileURLToPath(new URL('../dist/parquet-row-group-stream.js', import.meta.url));
const haveDist = existsSync(distStream);
if (!haveDist) console.warn(`parquet-row-group-stream.test: ${distStream} is missing (build packages/format); skipping the exit test`);

describe.skipIf(!haveDist)('process exit', () => {
  it('a process whose streams finished, aborted and failed on the shared pool exits on its own', () => {
    const script = `
      import * as arrow from 'apache-arrow';
      import { ParquetRowGroupStream } from ${JSON.stringify(distStream)};
      const batch = arrow.tableFromArrays({ a: Int32Array.from({ length: 3000 }, (_, i) => i) }).batches[0];
      const done = new ParquetRowGroupStream({ groupRows: 1000 });
      await done.add(batch);
      const bytes = await done.finish();
      const aborted = new ParquetRowGroupStream({ groupRows: 1000 });
      await aborted.add(batch);
      await aborted.abort();
      const failed = new ParquetRowGroupStream({ groupRows: 1000, compression: 'brotli' });
      const error = await failed.add(batch).then(() => 'none', (e) => e.name);
      console.log('streamed', bytes.length > 0, error);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, TIDEMARK_PARQUET_WORKERS: '2' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout).toBe('streamed true FormatError\n');
  });
});
