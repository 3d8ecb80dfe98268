/**
 * Child-process tasks of the write benchmark (`node write-tasks.mjs <task> <json args>`); each run
 * measures one writer in a fresh process (protocol in lib/measure.mjs). Input rows come from
 * lib/write-data.mjs: the JS writers load the same cached Arrow IPC file, DuckDB generates the same
 * values in SQL; loading or generating is never timed.
 *
 * Tasks:
 * - `prepare`: writes the cached Arrow IPC input file (so the parent never holds the data).
 * - `tidemark`: creates a table in a fresh local warehouse, `newBatchWrite()` + one `write()` per
 *   input batch + `prepareCommit()` (timed as "write"), then `newCommit().commit()` (timed as
 *   "commit"). Returns the row count of every data file, in input order, so the raw baseline can
 *   produce the same file layout.
 * - `parquet-wasm`: the same input sliced into files of the given row counts, each encoded with
 *   `tableToIPC` → `pw.Table.fromIPCStream` → `pw.writeParquet` (ZSTD, column-chunk statistics, as
 *   the library sets them) and written with fsync: the least work that produces the same files.
 * - `duckdb`: `CREATE TABLE t AS <same rows>` (not timed), then `COPY t TO … (FORMAT parquet,
 *   COMPRESSION zstd)` (timed).
 * - `verify`: DuckDB aggregates over each writer's Parquet files, to show all hold the same rows.
 */
import { open, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

import { childMain, rssMiB } from './measure.mjs';
import { TABLE_FIELDS, arrowBytes, duckdbSelect, loadOrMakeTable } from './write-data.mjs';

async function parquetFiles(dir) {
  const out = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.parquet')) out.push(path.join(e.parentPath ?? e.path, e.name));
  }
  return out.sort();
}

async function totalSize(files) {
  let n = 0;
  for (const f of files) n += (await stat(f)).size;
  return n;
}

async function writeSynced(file, bytes) {
  const fh = await open(file, 'w');
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** CPU time (user + system, all threads of the process) since `start`, in ms. */
function cpuSince(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

const tasks = {
  async prepare({ ipcPath, rows }) {
    const t0 = performance.now();
    const table = await loadOrMakeTable(ipcPath, rows);
    return { ms: performance.now() - t0, rows: table.numRows, batches: table.batches.length, arrowBytes: arrowBytes(table) };
  },

  async tidemark({ ipcPath, rows, warehouse, partitioned }) {
    const core = await import('@tidemark/core');
    const input = await loadOrMakeTable(ipcPath, rows);
    const catalog = new core.FileSystemCatalog(warehouse);
    await catalog.createTable('bench.w', { fields: TABLE_FIELDS, partitionKeys: partitioned ? ['dt'] : [] });
    const table = await catalog.getTable('bench.w');
    const baseRssMiB = rssMiB();

    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const writer = table.newBatchWrite();
    for (const batch of input.batches) await writer.write(batch);
    const messages = await writer.prepareCommit();
    const t1 = performance.now();
    const result = await table.newCommit().commit({ messages });
    const t2 = performance.now();
    const cpuMs = cpuSince(c0);
    await writer.close();

    if (result.status !== 'committed') throw new Error(`commit returned ${JSON.stringify(result)}`);
    const fileRows = [];
    for (const m of messages) for (const f of m.newFiles) fileRows.push(f.rowCount);
    const written = fileRows.reduce((a, b) => a + b, 0);
    if (written !== rows) throw new Error(`tidemark wrote ${written} rows, expected ${rows}`);
    const files = await parquetFiles(catalog.tableLocation('bench.w'));
    const { parquetMetadata } = await import('hyparquet');
    let rowGroups = 0;
    for (const f of files) {
      const b = await readFile(f);
      rowGroups += parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)).row_groups.length;
    }
    return {
      ms: t2 - t0,
      cpuMs,
      writeMs: t1 - t0,
      commitMs: t2 - t1,
      rows,
      files: files.length,
      fileRows,
      rowGroups,
      fileBytes: await totalSize(files),
      arrowBytes: arrowBytes(input),
      baseRssMiB,
      snapshotId: result.snapshotId,
    };
  },

  async 'parquet-wasm'({ ipcPath, rows, outDir, fileRows }) {
    const pw = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const input = await loadOrMakeTable(ipcPath, rows);
    await mkdir(outDir, { recursive: true });
    const baseRssMiB = rssMiB();

    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let start = 0;
    let fileBytes = 0;
    for (let k = 0; k < fileRows.length; k++) {
      const n = fileRows[k];
      const chunk = input.slice(start, start + n);
      start += n;
      const props = new pw.WriterPropertiesBuilder()
        .setCompression(pw.Compression.ZSTD)
        .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
        .build();
      const bytes = pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(chunk, 'stream')), props);
      await writeSynced(path.join(outDir, `part-${k}.parquet`), bytes);
      fileBytes += bytes.length;
    }
    const ms = performance.now() - t0;
    const cpuMs = cpuSince(c0);
    if (start !== rows) throw new Error(`file row counts add up to ${start}, expected ${rows}`);
    return { ms, cpuMs, rows, files: fileRows.length, fileBytes, arrowBytes: arrowBytes(input), baseRssMiB };
  },

  /**
   * The price of cutting a file for the workers, on one thread: the same rows encoded as one row
   * group and as `groups` equal groups (alternating, `runs` times each), CPU time and bytes. Every
   * group restarts parquet-rs's dictionaries, which unique columns fill and then abandon.
   */
  async 'split-cost'({ ipcPath, rows, groups, runs }) {
    const pw = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const input = await loadOrMakeTable(ipcPath, rows);
    const ipc = arrow.tableToIPC(input, 'stream');
    const encode = (groupRows) => {
      const props = new pw.WriterPropertiesBuilder()
        .setCompression(pw.Compression.ZSTD)
        .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
        .setMaxRowGroupSize(groupRows)
        .build();
      const c0 = process.cpuUsage();
      const bytes = pw.writeParquet(pw.Table.fromIPCStream(ipc), props);
      return { cpuMs: cpuSince(c0), bytes: bytes.length };
    };
    encode(rows); // compiles and optimises the encoder, which both layouts then share
    const one = [];
    const split = [];
    for (let r = 0; r < runs; r++) {
      one.push(encode(rows));
      split.push(encode(Math.ceil(rows / groups)));
    }
    return { one, split };
  },

  async duckdb({ rows, outPath }) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const threads = Number((await conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0][0]);
    await conn.run(`CREATE TABLE t AS ${duckdbSelect(rows)}`);
    await mkdir(path.dirname(outPath), { recursive: true });
    const baseRssMiB = rssMiB();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await conn.run(`COPY t TO '${outPath.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`);
    const ms = performance.now() - t0;
    const cpuMs = cpuSince(c0);
    const fileBytes = (await stat(outPath)).size;
    return { ms, cpuMs, rows, files: 1, fileBytes, threads, baseRssMiB };
  },

  async verify({ sources, rows }) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const aggregates = `count(*) AS n, sum(id) AS ids, sum(round(amount * 100)::HUGEINT) AS amounts, sum(hash(name)) AS names,
      min(name) AS min_name, count(DISTINCT name) AS names_distinct, sum(epoch_ms(ts)) AS ts, count(DISTINCT dt) AS dts, sum(hash(dt)) AS dt_hash`;
    const out = {};
    const query = async (from) => {
      const reader = await conn.runAndReadAll(`SELECT ${aggregates} FROM ${from}`);
      const names = reader.columnNames();
      const row = reader.getRows()[0];
      return Object.fromEntries(names.map((n, i) => [n, String(row[i])]));
    };
    out.reference = await query(`(${duckdbSelect(rows)})`);
    for (const [name, dir] of Object.entries(sources)) {
      const files = dir.endsWith('.parquet') ? [dir] : await parquetFiles(dir);
      // hive_partitioning off: the dt=… directories would otherwise replace the file's own dt column.
      out[name] = await query(`read_parquet([${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(',')}], hive_partitioning = false)`);
    }
    const ref = JSON.stringify(out.reference);
    const mismatches = Object.entries(out)
      .filter(([, v]) => JSON.stringify(v) !== ref)
      .map(([k]) => k);
    return { aggregates: out, mismatches };
  },
};

await childMain(tasks);
