/**
 * Child-process tasks of the read benchmark (`node read-tasks.mjs <task> <json args>`); each run
 * measures one thing in a fresh process. See lib/measure.mjs for the protocol.
 *
 * Tasks:
 * - `plan`: tidemark scan planning of the latest snapshot (openTable + newRead().plan()).
 * - `read-tidemark`: full read through `newRead().batches()`.
 * - `read-duckdb`: DuckDB `read_parquet([...live files])`, aggregating every column so every
 *   column is decoded (the result is not materialised in JS).
 * - `read-parquet-wasm`: each live file read with `fs.readFile` + parquet-wasm `readParquet`
 *   (one batch per file) + IPC into an apache-arrow Table, i.e. the raw decode path without any
 *   table logic.
 *
 * Every read task returns `rows` and `idSum` (sum of the `id` column), so the parent can check
 * that all readers saw the same data.
 */
import { readFile } from 'node:fs/promises';

import { childMain, rssMiB } from './measure.mjs';

async function livePaths(listFile, limit) {
  const all = (await readFile(listFile, 'utf8')).split('\n').filter(Boolean);
  return limit !== undefined && all.length > limit ? all.slice(0, limit) : all;
}

/** Sum of an Int64 Arrow column (all chunks), as a bigint. */
function sumInt64(vector) {
  let sum = 0n;
  if (!vector) return sum;
  for (const data of vector.data) {
    const values = data.values;
    for (let i = 0; i < data.length; i++) sum += values[i];
  }
  return sum;
}

/** Files and rows of a plan, whatever container shape `plan()` returns. */
function summarisePlan(plan) {
  const splits = Array.isArray(plan) ? plan : (plan.splits ?? []);
  let files = 0;
  let rows = 0;
  for (const split of splits) {
    const list = split.dataFiles ?? split.files ?? [];
    files += list.length;
    for (const f of list) rows += Number((f.meta ?? f.file ?? f).rowCount ?? 0);
  }
  return { splits: splits.length, files, rows };
}

async function loadCore() {
  const core = await import('@tidemark/core');
  if (typeof core.openTable !== 'function') throw new Error('@tidemark/core has no openTable export (engine not built yet)');
  return core;
}

const tasks = {
  async plan({ root }) {
    const core = await loadCore();
    globalThis.gc?.();
    const baseRssMiB = rssMiB();
    const baseHeapMiB = process.memoryUsage().heapUsed / 2 ** 20;
    const t0 = performance.now();
    const table = await core.openTable(root);
    const t1 = performance.now();
    const plan = await table.newRead({}).plan();
    const t2 = performance.now();
    const summary = summarisePlan(plan);
    // Heap still held once planning is over: the plan itself (O(live files) by nature).
    globalThis.gc?.();
    const retainedHeapMiB = process.memoryUsage().heapUsed / 2 ** 20 - baseHeapMiB;
    return { openMs: t1 - t0, planMs: t2 - t1, ...summary, baseRssMiB, retainedHeapMiB, keepAlive: plan ? 1 : 0 };
  },

  async 'read-tidemark'({ root }) {
    const core = await loadCore();
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    const table = await core.openTable(root);
    let rows = 0;
    let batches = 0;
    let idSum = 0n;
    for await (const batch of table.newRead({}).batches()) {
      rows += batch.numRows;
      batches++;
      idSum += sumInt64(batch.getChild('id'));
    }
    const ms = performance.now() - t0;
    return { ms, rows, batches, idSum: idSum.toString(), baseRssMiB };
  },

  async 'read-duckdb'({ liveFilesList, limit }) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const paths = await livePaths(liveFilesList, limit);
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const threads = (await conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0][0];
    const baseRssMiB = rssMiB();
    const list = `[${paths.map((p) => `'${p.replaceAll("'", "''")}'`).join(',')}]`;
    const t0 = performance.now();
    const reader = await conn.runAndReadAll(
      `SELECT count(*), sum(id), sum(length(name)), sum(amount), max(ts), sum(p) FROM read_parquet(${list})`,
    );
    const ms = performance.now() - t0;
    const row = reader.getRows()[0];
    return { ms, rows: Number(row[0]), idSum: String(row[1]), files: paths.length, threads: Number(threads), baseRssMiB };
  },

  async 'read-parquet-wasm'({ liveFilesList, limit }) {
    const pw = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const paths = await livePaths(liveFilesList, limit);
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    let rows = 0;
    let idSum = 0n;
    for (const p of paths) {
      const bytes = await readFile(p);
      const wasmTable = pw.readParquet(bytes, { batchSize: 1 << 20 });
      const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
      rows += table.numRows;
      idSum += sumInt64(table.getChild('id'));
    }
    const ms = performance.now() - t0;
    return { ms, rows, idSum: idSum.toString(), files: paths.length, baseRssMiB };
  },
};

await childMain(tasks);
