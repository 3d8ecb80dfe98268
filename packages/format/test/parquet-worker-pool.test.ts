import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import {
  CorruptFileError,
  encodeParquetAsync,
  ParquetDataFile,
  ParquetEncodeError,
  ParquetWorkerPool,
  prepareParquetInput,
  readParquetFile,
  utf8Vector,
  writeParquetFile,
} from '../src/index.js';
import { MemoryFileIO } from '@tidemark/storage';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { trackedPools } from './helpers/test-pools.js';

const meta = (id: number): Map<string, string> => new Map([['PARQUET:field_id', String(id)]]);

/** A few columns of typical types; `seed` varies the values so concurrent jobs differ. */
function table(rows: number, seed: number): arrow.Table {
  const fields = [
    new arrow.Field('id', new arrow.Int64(), false, meta(1)),
    new arrow.Field('name', new arrow.Utf8(), true, meta(2)),
    new arrow.Field('amount', new arrow.Float64(), true, meta(3)),
    new arrow.Field('ts', new arrow.TimestampSecond(), true, meta(4)),
  ];
  const children = [
    arrow.makeData({
      type: fields[0]!.type as arrow.Int64,
      length: rows,
      nullCount: 0,
      data: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i * seed)),
    }),
    utf8Vector(Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : `n-${seed}-${(i * 2654435761) % 1000003}`))).data[0]!,
    arrow.makeData({
      type: fields[2]!.type as arrow.Float64,
      length: rows,
      nullCount: 0,
      data: Float64Array.from({ length: rows }, (_, i) => Math.sin(i + seed)),
    }),
    arrow.makeData({
      type: fields[3]!.type as arrow.TimestampSecond,
      length: rows,
      nullCount: 0,
      data: BigInt64Array.from({ length: rows }, (_, i) => BigInt(seed * 1000 - i)),
    }),
  ];
  const schema = new arrow.Schema(fields);
  const batch = new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: rows, nullCount: 0, children }));
  return new arrow.Table(schema, [batch.slice(0, rows >> 1), batch.slice(rows >> 1)]);
}

async function readBack(bytes: Uint8Array): Promise<unknown[]> {
  const io = new CountingFileIO().put('f', bytes);
  const rows: unknown[] = [];
  for await (const b of readParquetFile(io.asFileIO(), 'f')) {
    for (const r of b) rows.push(r?.toJSON());
  }
  return rows;
}

const pool = trackedPools();

describe('encodeParquetAsync', () => {
  it('produces the same bytes and rows as writeParquetFile, in workers and in-thread', async () => {
    const t = table(5_000, 3);
    const options = { compression: 'zstd', rowGroupSize: 1_000, createdBy: 'pool-test' } as const;
    const sync = writeParquetFile(t, options);
    const inWorker = await encodeParquetAsync(t, { ...options, pool: pool(1) });
    const inThread = await encodeParquetAsync(t, { ...options, pool: false });
    const zeroPool = await pool(0).encode(t, options);
    expect(Buffer.from(inWorker).equals(Buffer.from(sync))).toBe(true);
    expect(Buffer.from(inThread).equals(Buffer.from(sync))).toBe(true);
    expect(Buffer.from(zeroPool).equals(Buffer.from(sync))).toBe(true);
    const rows = await readBack(inWorker);
    expect(rows).toEqual(await readBack(sync));
    expect(rows).toHaveLength(5_000);
  });

  it('encodes the same bytes in a worker given no compiled module (it then loads parquet-wasm itself)', async () => {
    // Pool workers instantiate the module the pool compiled, through parquet-wasm's web glue; a
    // worker that gets none falls back to the Node build, and both must write the same file.
    const t = table(3_000, 5);
    const { ipc, settings } = prepareParquetInput(t, { rowGroupSize: 1_000, createdBy: 'pool-test' });
    const worker = new Worker(new URL('../worker/parquet-worker.mjs', import.meta.url), { workerData: { wasmModule: null } });
    try {
      const reply = await new Promise<{ ok: boolean; bytes?: Uint8Array }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({ id: 1, ipc, settings });
      });
      expect(reply.ok).toBe(true);
      const pooled = await encodeParquetAsync(t, { rowGroupSize: 1_000, createdBy: 'pool-test', pool: pool(1) });
      expect(Buffer.from(reply.bytes!).equals(Buffer.from(pooled))).toBe(true);
      expect(Buffer.from(pooled).equals(Buffer.from(writeParquetFile(t, { rowGroupSize: 1_000, createdBy: 'pool-test' })))).toBe(true);
    } finally {
      await worker.terminate();
    }
  });

  it('keeps the writer fixes: Timestamp[s] becomes ms, shared typed arrays are unshared', async () => {
    const shared = Int32Array.from([1, 2, 3]);
    const fields = [
      new arrow.Field('a', new arrow.Int32(), false, meta(1)),
      new arrow.Field('b', new arrow.Int32(), false, meta(2)),
      new arrow.Field('s', new arrow.TimestampSecond(), true, meta(3)),
    ];
    const children = [
      arrow.makeData({ type: fields[0]!.type as arrow.Int32, length: 3, nullCount: 0, data: shared }),
      arrow.makeData({ type: fields[1]!.type as arrow.Int32, length: 3, nullCount: 0, data: shared }),
      arrow.makeData({
        type: fields[2]!.type as arrow.TimestampSecond,
        length: 3,
        nullCount: 0,
        data: BigInt64Array.from([-1n, 0n, 1700000000n]),
      }),
    ];
    const schema = new arrow.Schema(fields);
    const batch = new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: 3, nullCount: 0, children }));
    const bytes = await pool(1).encode([batch]);
    const io = new CountingFileIO().put('f', bytes);
    const batches: arrow.RecordBatch[] = [];
    for await (const b of readParquetFile(io.asFileIO(), 'f')) batches.push(b);
    expect([...batches[0]!.getChild('a')!]).toEqual([1, 2, 3]);
    expect([...batches[0]!.getChild('b')!]).toEqual([1, 2, 3]);
    const s = batches[0]!.getChild('s')!;
    expect((s.type as arrow.Timestamp).unit).toBe(arrow.TimeUnit.MILLISECOND);
    expect([...(s.data[0]!.values as BigInt64Array)]).toEqual([-1000n, 0n, 1700000000000n]);
  });

  it('runs many jobs in flight on a pool of two, each with its own result', async () => {
    const p = pool(2);
    const tables = Array.from({ length: 12 }, (_, i) => table(2_000 + i * 100, i + 1));
    const results = await Promise.all(tables.map((t) => p.encode(t)));
    for (let i = 0; i < tables.length; i++) {
      expect(Buffer.from(results[i]!).equals(Buffer.from(writeParquetFile(tables[i]!)))).toBe(true);
    }
  });

  it('rejects the same bad options as writeParquetFile', async () => {
    const t = table(10, 1);
    await expect(encodeParquetAsync(t, { compression: 'brotli' as never, pool: pool(1) })).rejects.toThrow(
      /unsupported Parquet compression 'brotli'/,
    );
    await expect(encodeParquetAsync(t, { rowGroupSize: 0, pool: pool(1) })).rejects.toThrow(/rowGroupSize must be a positive integer/);
  });
});

describe('ParquetWorkerPool failures', () => {
  it('rejects a job whose bytes parquet-wasm cannot read and keeps working', async () => {
    const p = pool(1);
    const garbage = Uint8Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff);
    await expect(p.encodeIpc(garbage, { codec: 0, createdBy: 'x' })).rejects.toBeInstanceOf(ParquetEncodeError);
    const t = table(1_000, 5);
    expect(await readBack(await p.encode(t))).toEqual(await readBack(writeParquetFile(t)));
  });

  it('rejects the job of a crashed or exited worker with a clear error and replaces the worker', async () => {
    const crashing = new URL('./helpers/crashing-encode-worker.mjs', import.meta.url);
    const p = pool(1, crashing);
    const t = table(1_000, 9);
    const expected = writeParquetFile(t);
    await expect(p.encode(t, { createdBy: 'throw' })).rejects.toThrow(/Parquet encode worker crashed \(simulated worker crash\)/);
    expect(Buffer.from(await p.encode(t)).equals(Buffer.from(expected))).toBe(true);
    const [exited, queued] = await Promise.allSettled([p.encode(t, { createdBy: 'exit' }), p.encode(t)]);
    expect(exited.status).toBe('rejected');
    expect(String((exited as PromiseRejectedResult).reason)).toMatch(/Parquet encode worker exited unexpectedly with code 7/);
    // The job queued behind the crash runs on a fresh worker.
    expect(queued.status).toBe('fulfilled');
    expect(Buffer.from((queued as PromiseFulfilledResult<Uint8Array>).value).equals(Buffer.from(expected))).toBe(true);
  });

  it('rejects a decode whose worker crashed with CorruptFileError naming the file, and decodes on a fresh worker', async () => {
    const p = pool(1, new URL('./helpers/crashing-encode-worker.mjs', import.meta.url));
    const t = table(2_000, 3);
    const bytes = writeParquetFile(t);
    const io = new CountingFileIO().put('dir/f.parquet', bytes).asFileIO();
    const file = await ParquetDataFile.open(io, 'dir/f.parquet');
    const crash = file.decode([0], { pool: p, batchSize: 7777 });
    await expect(crash).rejects.toBeInstanceOf(CorruptFileError);
    await expect(crash).rejects.toThrow(
      /^dir\/f\.parquet: cannot decode row group 0: the Parquet decoder crashed on this file \(worker crashed \(simulated decoder crash\)\)/,
    );
    const batches = await file.decode([0], { pool: p, columns: ['id'] });
    expect(batches.reduce((n, b) => n + b.numRows, 0)).toBe(2_000);
    expect(batches[0]!.getChild('id')!.get(1)).toBe(3n);
  });

  it('warm() starts workers that then take jobs', async () => {
    const p = pool(2);
    p.warm(2);
    const tables = [table(500, 2), table(600, 4)];
    const out = await Promise.all(tables.map((t) => p.encode(t)));
    expect(out.map((b) => Buffer.from(b).equals(Buffer.from(writeParquetFile(tables[out.indexOf(b)]!))))).toEqual([true, true]);
  });

  it('rejects jobs after close', async () => {
    const p = new ParquetWorkerPool({ size: 1 });
    await p.encode(table(10, 1));
    await p.close();
    await expect(p.encode(table(10, 1))).rejects.toThrow(/closed/);
  });

  it('reads TIDEMARK_PARQUET_WORKERS for its default size', () => {
    const old = process.env['TIDEMARK_PARQUET_WORKERS'];
    try {
      process.env['TIDEMARK_PARQUET_WORKERS'] = '0';
      expect(new ParquetWorkerPool().size).toBe(0);
      process.env['TIDEMARK_PARQUET_WORKERS'] = '3';
      expect(new ParquetWorkerPool().size).toBe(3);
      process.env['TIDEMARK_PARQUET_WORKERS'] = 'many';
      expect(() => new ParquetWorkerPool()).toThrow(/TIDEMARK_PARQUET_WORKERS must be a non-negative integer, got 'many'/);
    } finally {
      if (old === undefined) delete process.env['TIDEMARK_PARQUET_WORKERS'];
      else process.env['TIDEMARK_PARQUET_WORKERS'] = old;
    }
  });
});

const distPool = fileURLToPath(new URL('../dist/parquet-worker-pool.js', import.meta.url));
const haveDist = existsSync(distPool);
if (!haveDist)
  console.warn(`parquet-worker-pool.test: ${distPool} is missing (run tsc -p packages/format); skipping the process-exit test`);

describe.skipIf(!haveDist)('process exit', () => {
  it('a process that warms and encodes through the shared pool exits on its own', () => {
    const script = `
      import * as arrow from 'apache-arrow';
      import { encodeParquetAsync, sharedParquetWorkerPool } from ${JSON.stringify(distPool)};
      sharedParquetWorkerPool().warm(2);
      const t = arrow.tableFromArrays({ a: Int32Array.from({ length: 1000 }, (_, i) => i) });
      const out = await Promise.all([encodeParquetAsync(t), encodeParquetAsync(t)]);
      console.log('encoded', out.map((b) => b.length).join(','));
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
    expect(child.stdout).toMatch(/^encoded \d+,\d+\n$/);
  });
});

describe('decoding on workers from bytes the caller keeps', () => {
  it('reads every row group of a file stored from a Node Buffer in memory, and leaves the store intact', async () => {
    const t = table(30_000, 5);
    const bytes = Buffer.from(writeParquetFile(t, { rowGroupSize: 7_000 }));
    const io = new MemoryFileIO();
    const path = 'memory://worker-owned/f.parquet';
    await io.write(path, bytes);
    const read = async (): Promise<bigint[]> => {
      const ids: bigint[] = [];
      for await (const b of readParquetFile(io, path)) for (const v of b.getChild('id')!.toArray() as BigInt64Array) ids.push(v);
      return ids;
    };
    const expected = [...(t.getChild('id')!.toArray() as BigInt64Array)];
    // Twice: the tail kept for later row groups and the stored bytes must survive the transfers.
    expect(await read()).toEqual(expected);
    expect(await read()).toEqual(expected);
    expect(bytes.byteLength).toBeGreaterThan(0);
  });

  it('copies bytes that are views of a shared buffer (Node Buffers from the pool) instead of detaching it', async () => {
    const t = table(30_000, 6);
    const mem = new MemoryFileIO();
    const path = 'memory://worker-views/f.parquet';
    await mem.write(path, writeParquetFile(t, { rowGroupSize: 7_000 }));
    // Small Buffer.from copies land in Node's shared 8 KiB pool: views with a non-zero offset.
    const io = Object.assign(Object.create(mem) as MemoryFileIO, {
      read: async (p: string) => Buffer.from(await mem.read(p)),
      readRange: async (p: string, offset: number, length: number) => Buffer.from(await mem.readRange(p, offset, length)),
    });
    const witness = Buffer.from('still here');
    let rows = 0;
    for (let i = 0; i < 2; i++) for await (const b of readParquetFile(io, path)) rows += b.numRows;
    expect(rows).toBe(60_000);
    expect(witness.toString()).toBe('still here');
    expect(Buffer.from('new bytes').toString()).toBe('new bytes');
  });
});
