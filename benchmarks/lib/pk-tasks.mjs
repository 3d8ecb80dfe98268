/**
 * Child-process tasks of the primary-key benchmark (`node pk-tasks.mjs <task> <json args>`;
 * protocol in lib/measure.mjs). Each run measures one writer in a fresh process.
 *
 * Data: N rows (id BIGINT NOT NULL, name STRING, amount DOUBLE, ts TIMESTAMP(3)) in 100,000-row
 * Arrow batches, cached as an IPC file. The first 70 % of the rows insert distinct keys in a
 * permuted order; the last 30 % update keys inserted before (so the table ends with 0.7·N keys).
 *
 * Tasks:
 * - `prepare`: writes the cached Arrow IPC input.
 * - `upsert`: creates a primary-key table (primary key id, `bucket` = 4, `write-only` = true so
 *   that no compaction runs; `write-buffer-size` as given), then timed: `newBatchWrite()`, one
 *   `write()` per batch, `prepareCommit()`, `newCommit().commit()`. Afterwards (not timed) reads
 *   the table back and counts rows and distinct keys.
 * - `append`: the same rows into an append table with `bucket` = 4, `bucket-key` = id.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import * as arrow from 'apache-arrow';

import { profilePhases, threadCpu, threadCpuSplit } from './cpu-phases.mjs';
import { childMain, rssMiB } from './measure.mjs';
import { arrowSchemaFor } from './arrow-schema.mjs';

const FIELDS = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'name', type: 'STRING' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'ts', type: 'TIMESTAMP(3)' },
];
const SCHEMA = arrowSchemaFor(FIELDS);
const BASE_MS = Date.UTC(2024, 0, 1);
/** Share of rows that update an existing key. */
export const UPDATE_SHARE = 0.3;

/** Key of row i: a permutation of [0, inserts) for the inserts, then earlier keys again. */
function keyOf(i, inserts) {
  if (i < inserts) return (i * 7919) % inserts;
  return ((i - inserts) * 104729) % inserts;
}

function makeBatch(start, count, total) {
  const inserts = Math.round(total * (1 - UPDATE_SHARE));
  const ids = new BigInt64Array(count);
  const amounts = new Float64Array(count);
  const ts = new BigInt64Array(count);
  const names = [];
  for (let k = 0; k < count; k++) {
    const i = start + k;
    ids[k] = BigInt(keyOf(i, inserts));
    names.push(`name-${String(i).padStart(11, '0')}`);
    amounts[k] = ((i * 7919) % 1_000_000) / 100;
    ts[k] = BigInt(BASE_MS + i * 1000);
  }
  const children = [
    arrow.makeData({ type: SCHEMA.fields[0].type, length: count, nullCount: 0, data: ids }),
    arrow.vectorFromArray(names, new arrow.Utf8()).data[0],
    arrow.makeData({ type: SCHEMA.fields[2].type, length: count, nullCount: 0, data: amounts }),
    arrow.makeData({ type: SCHEMA.fields[3].type, length: count, nullCount: 0, data: ts }),
  ];
  return new arrow.RecordBatch(SCHEMA, arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: count, nullCount: 0, children }));
}

async function loadInput(ipcPath, rows) {
  if (!existsSync(ipcPath)) {
    const batches = [];
    for (let s = 0; s < rows; s += 100_000) batches.push(makeBatch(s, Math.min(100_000, rows - s), rows));
    await mkdir(path.dirname(ipcPath), { recursive: true });
    const tmp = `${ipcPath}.${process.pid}.tmp`;
    await writeFile(tmp, arrow.tableToIPC(new arrow.Table(SCHEMA, batches), 'file'));
    await rename(tmp, ipcPath);
  }
  const table = arrow.tableFromIPC(await readFile(ipcPath));
  if (table.numRows !== rows) throw new Error(`${ipcPath} holds ${table.numRows} rows, expected ${rows}; delete it to regenerate`);
  return table;
}

async function dataFiles(dir) {
  const out = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.parquet')) out.push(path.join(e.parentPath ?? e.path, e.name));
  }
  let bytes = 0;
  for (const f of out) bytes += (await stat(f)).size;
  return { files: out.length, bytes };
}

/**
 * Phases of a write, by the functions that start them (the nearest one on a sample's stack
 * decides): converting input, routing, sorting and merging a primary-key write buffer, gathering
 * the merged rows into columns, file statistics, encoding (the main thread's part: the worker
 * pool encodes the rest, counted as off-main CPU), and the commit.
 */
const PHASES = [
  ['commit', /@.*\/core\/dist\/commit\//],
  ['encode', /^(encodeParquet\w*|addIpc|add|finish)@.*parquet-/],
  ['stats', /@.*value-stats\.js$/],
  ['convert', /^toBatches@/],
  ['route', /^split@.*row-router\.js$/],
  ['sort', /^(sortRecords|sortByWords|resolveTies)@/],
  ['sort keys', /^add@.*merged-columns\.js$|^encode@.*normalized-key\.js$/],
  ['merge', /^(mergeRecords@|merge@.*sort-buffer\.js$)/],
  ['gather', /^(columns|sequences|kinds)@.*(merged-columns|sort-buffer)\.js$/],
  ['changelog', /^writeChangelog@/],
  ['file write', /^writeFile@/],
];

function cpuSince(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

async function writeTable({ ipcPath, rows, warehouse, primaryKey, writeBufferSize, profile }) {
  const core = await import('@tidemark/core');
  const input = await loadInput(ipcPath, rows);
  await rm(warehouse, { recursive: true, force: true });
  const catalog = new core.FileSystemCatalog(warehouse);
  const options = primaryKey
    ? { bucket: '4', 'write-only': 'true', ...(writeBufferSize ? { 'write-buffer-size': writeBufferSize } : {}) }
    : { bucket: '4', 'bucket-key': 'id', ...(writeBufferSize ? { 'write-buffer-size': writeBufferSize } : {}) };
  await catalog.createTable('bench.t', { fields: FIELDS, ...(primaryKey ? { primaryKeys: ['id'] } : {}), options });
  const table = await core.openTable(catalog.tableLocation('bench.t'));
  const baseRssMiB = rssMiB();
  const cpu0 = process.cpuUsage();
  const threads0 = await threadCpu();
  const t0 = performance.now();
  let t1 = 0;
  const writer = table.newBatchWrite({ recordInflight: false });
  const timed = async () => {
    for (const batch of input.batches) await writer.write(batch);
    const messages = await writer.prepareCommit();
    t1 = performance.now();
    return table.newCommit({ recordInflight: false, expire: false }).commit({ messages });
  };
  const profiled = profile ? await profilePhases(timed, PHASES) : null;
  const result = profiled ? profiled.result : await timed();
  const ms = performance.now() - t0;
  const cpuMs = cpuSince(cpu0);
  const threads = threadCpuSplit(threads0, await threadCpu());
  // The high-water mark of the write alone: the read-back below holds every key.
  const writePeakRssMiB = process.resourceUsage().maxRSS / 1024;
  await writer.close();
  if (result.status !== 'committed') throw new Error(`commit ended ${result.status}`);
  const files = await dataFiles(table.location);
  let readRows = 0;
  const keys = new Set();
  for await (const batch of table.newRead({ columns: ['id'] }).batches()) {
    readRows += batch.numRows;
    for (const v of batch.getChild('id')) keys.add(v);
  }
  await table.close();
  return {
    ms,
    writeMs: t1 - t0,
    commitMs: ms - (t1 - t0),
    cpuMs,
    // Main thread; threads started by the write (the encode pool's workers); V8's helper threads.
    mainCpuMs: threads?.mainMs ?? null,
    workerCpuMs: threads?.newThreadsMs ?? null,
    helperCpuMs: threads?.oldThreadsMs ?? null,
    ...(profiled ? { phases: profiled.phases, otherTop: profiled.otherTop } : {}),
    baseRssMiB,
    writePeakRssMiB,
    ...files,
    readRows,
    distinctKeys: keys.size,
  };
}

const tasks = {
  async prepare({ ipcPath, rows }) {
    const table = await loadInput(ipcPath, rows);
    return { rows: table.numRows, batches: table.batches.length };
  },
  upsert: (args) => writeTable({ ...args, primaryKey: true }),
  append: (args) => writeTable({ ...args, primaryKey: false }),
};

await childMain(tasks);
