/**
 * Child-process tasks of the read benchmark's data-read part (`node data-read-tasks.mjs <task>
 * <json args>`; protocol in lib/measure.mjs): decoding the rows of a few large data files, where
 * the Parquet decoder (not planning) is the cost.
 *
 * Tasks:
 * - `prepare`: a local append table of `rows` rows in `files` commits of one data file each
 *   (columns of lib/write-data.mjs: id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP(3),
 *   dt STRING); skipped when the table is already there. Returns the data file paths.
 * - `tidemark`: `openTable` + `newRead({ columns }).batches()` (planning included), summing `id`.
 * - `parquet-wasm`: every file read with `fs.readFile`, decoded by parquet-wasm on this one thread
 *   (`ParquetFile.read` with the same columns: `readParquet` of parquet-wasm 0.8 ignores a
 *   projection) and handed to apache-arrow through IPC: the raw single-threaded decode path.
 * - `duckdb`: `read_parquet([...files])` aggregating the same columns (native, all its threads).
 *
 * Every task returns `rows` and `idSum`, so the parent can check that all readers saw the same rows.
 */
import { Blob } from 'node:buffer';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { childMain, rssMiB } from './measure.mjs';
import { sumInt64 } from './stats.mjs';
import { TABLE_FIELDS, makeBatch } from './write-data.mjs';

/** CPU time (user + system, every thread of the process: workers included) since `start`, in ms. */
function cpuSince(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

async function dataFiles(root) {
  const out = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.parquet')) out.push(path.join(e.parentPath ?? e.path, e.name));
  }
  return out.sort();
}

const tasks = {
  /**
   * What a cold worker pool costs before it decodes anything: starting every worker (Node's thread
   * bootstrap plus parquet-wasm's glue and instance) and one tiny job each, in a fresh process.
   */
  async 'pool-start'() {
    const format = await import('@tidemark/format');
    const arrow = await import('apache-arrow');
    const tiny = arrow.tableFromArrays({ a: Int32Array.from([1, 2, 3]) });
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const pool = new format.ParquetWorkerPool();
    await Promise.all(Array.from({ length: pool.size }, () => pool.encode(tiny)));
    const ms = performance.now() - t0;
    const cpuMs = cpuSince(c0);
    await pool.close();
    return { ms, cpuMs, workers: pool.size };
  },

  /**
   * Where a cold read's extra work goes: every row group of `files` decoded (all columns, into
   * Arrow) three times in one fresh process: on the main thread (cold, then warm), then on one new
   * worker thread of a pool (its isolate is new, the compiled parquet-wasm module is the process's),
   * and once more on a second new worker. Per pass: CPU time split into user and system, and the
   * minor page faults (fresh memory being touched: wasm linear memory and JS heap growth).
   */
  async 'cold-gap'({ files }) {
    const format = await import('@tidemark/format');
    const { LocalFileIO } = await import('@tidemark/storage');
    const io = new LocalFileIO();
    const pass = async (pool) => {
      const r0 = process.resourceUsage();
      const t0 = performance.now();
      let rows = 0;
      for (const p of files) {
        const file = await format.ParquetDataFile.open(io, p);
        for (let g = 0; g < file.rowGroups.length; g++) {
          for (const b of await file.decode([g], { pool })) rows += b.numRows;
        }
      }
      const r1 = process.resourceUsage();
      return {
        ms: performance.now() - t0,
        userMs: (r1.userCPUTime - r0.userCPUTime) / 1000,
        systemMs: (r1.systemCPUTime - r0.systemCPUTime) / 1000,
        minorFaults: r1.minorPageFault - r0.minorPageFault,
        rows,
      };
    };
    const mainCold = await pass(false);
    const mainWarm = await pass(false);
    const first = new format.ParquetWorkerPool({ size: 1 });
    const workerNew = await pass(first);
    const workerWarm = await pass(first);
    await first.close();
    const second = new format.ParquetWorkerPool({ size: 1 });
    const secondWorker = await pass(second);
    await second.close();
    return { mainCold, mainWarm, workerNew, workerWarm, secondWorker };
  },

  async prepare({ warehouse, rows, files }) {
    const root = path.join(warehouse, 'bench.db', 'r');
    const marker = path.join(warehouse, 'done.json');
    if (!existsSync(marker)) {
      const core = await import('@tidemark/core');
      const catalog = new core.FileSystemCatalog(warehouse);
      await catalog.createTable('bench.r', { fields: TABLE_FIELDS });
      const table = await catalog.getTable('bench.r');
      const per = Math.ceil(rows / files);
      for (let f = 0; f < files; f++) {
        const writer = table.newBatchWrite();
        for (let start = f * per; start < Math.min(rows, (f + 1) * per); start += 100_000) {
          await writer.write(makeBatch(start, Math.min(100_000, Math.min(rows, (f + 1) * per) - start), rows));
        }
        await table.newCommit().commit({ messages: await writer.prepareCommit() });
        await writer.close();
      }
      await writeFile(marker, JSON.stringify({ rows, files }));
    }
    return { root, files: await dataFiles(root) };
  },

  async tidemark({ root, columns, readAhead }) {
    const core = await import('@tidemark/core');
    const baseRssMiB = rssMiB();
    const readOnce = async () => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const table = await core.openTable(root);
      let rows = 0;
      let batches = 0;
      let idSum = 0n;
      const read = table.newRead({ columns, ...(readAhead !== undefined ? { readAhead } : {}) });
      for await (const batch of read.batches()) {
        rows += batch.numRows;
        batches++;
        idSum += sumInt64(batch.getChild('id'));
      }
      return { ms: performance.now() - t0, cpuMs: cpuSince(c0), rows, batches, idSum: idSum.toString() };
    };
    const format = await import('@tidemark/format');
    const first = await readOnce();
    // The same read again in this process: the workers are warm, as in a long-running service.
    const warm = await readOnce();
    return { ...first, warmMs: warm.ms, warmCpuMs: warm.cpuMs, baseRssMiB, workers: format.defaultParquetWorkerCount() };
  },

  async 'parquet-wasm'({ files, columns }) {
    const pw = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const baseRssMiB = rssMiB();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let rows = 0;
    let idSum = 0n;
    for (const p of files) {
      const bytes = await readFile(p);
      const file = await pw.ParquetFile.fromFile(new Blob([bytes]));
      const wasmTable = await file.read({ columns, batchSize: 1 << 20 });
      file.free();
      const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
      rows += table.numRows;
      idSum += sumInt64(table.getChild('id'));
    }
    const ms = performance.now() - t0;
    return { ms, cpuMs: cpuSince(c0), rows, idSum: idSum.toString(), baseRssMiB };
  },

  async duckdb({ files, columns }) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const threads = (await conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0][0];
    const baseRssMiB = rssMiB();
    const list = `[${files.map((p) => `'${p.replaceAll("'", "''")}'`).join(',')}]`;
    const agg = { id: 'sum(id)', name: 'sum(length(name))', amount: 'sum(amount)', ts: 'max(ts)', dt: 'max(dt)' };
    const select = ['count(*)', 'sum(id)', ...columns.filter((c) => c !== 'id').map((c) => agg[c])].join(', ');
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const reader = await conn.runAndReadAll(`SELECT ${select} FROM read_parquet(${list})`);
    const ms = performance.now() - t0;
    const cpuMs = cpuSince(c0);
    const row = reader.getRows()[0];
    return { ms, cpuMs, rows: Number(row[0]), idSum: String(row[1]), threads: Number(threads), baseRssMiB };
  },
};

await childMain(tasks);
