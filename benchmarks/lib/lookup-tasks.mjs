/**
 * Child-process tasks of the key-lookup benchmark (`node lookup-tasks.mjs <task> <json args>`;
 * protocol in lib/measure.mjs). Each task imports the engine it measures from `args.engine`, a
 * checkout whose packages are built (this repository, or a build of an older commit), so two
 * versions of the code are measured on the same table files in one benchmark run.
 *
 * Table: primary key `id` BIGINT, `name` STRING, `amount` DOUBLE, `ts` TIMESTAMP(3), `cat` INT;
 * `bucket` = 8 (or as given). Row i has id (i · 7919) mod N (a permutation: keys arrive in no order),
 * written in appends of `batchRows` rows by `table.append` (writers compact as they go), then
 * compacted fully (`compactPrimaryKeyTable({ full: true })`) unless `compact` is false.
 *
 * Tasks:
 * - `build`: creates and fills the table at `location` (skipped when `<location>/READY` exists).
 * - `lookups`: on one long-lived Table: the first one-key read, `lookups` more (p50/p90, storage
 *   requests per key by kind), a full read of the id column, and `id IN (…)` reads of `inKeys` keys.
 * - `deleteKeys`: `tidemark delete <table> --input keys.jsonl` of `keys` keys and
 *   `tidemark count <table> --where "id IN (…)"`, both run in-process through the CLI's `main`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';

import * as arrow from 'apache-arrow';

import { instrumentFileIO } from '../../test/support/instrumented-file-io.mjs';
import { seededRandom } from '../../test/support/seeded-random.mjs';
import { s3FileIOOptions } from './bench-storage.mjs';
import { childMain, median } from './measure.mjs';
import { arrowSchemaFor } from './arrow-schema.mjs';

const FIELDS = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'name', type: 'STRING' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'ts', type: 'TIMESTAMP(3)' },
  { name: 'cat', type: 'INT' },
];
const SCHEMA = arrowSchemaFor(FIELDS);
const KEY_STRIDE = 7919;
const BASE_MS = Date.UTC(2024, 0, 1);

/** The engine's packages, imported from its checkout. */
async function engineOf(root) {
  const load = (pkg) => import(pathToFileURL(path.join(root, 'packages', pkg, 'dist', 'index.js')).href);
  const [storage, core, maintenance, cli] = await Promise.all([load('storage'), load('core'), load('maintenance'), load('cli')]);
  return { storage, core, maintenance, cli };
}

function fileIOOf(engine, location, s3) {
  return location.startsWith('s3://') ? new engine.storage.S3FileIO(s3FileIOOptions(s3)) : new engine.storage.LocalFileIO();
}

/** Rows [start, start + count) of an N-row table as one RecordBatch (ids permuted, see the module comment). */
function rowsBatch(start, count, total, idStride = 1) {
  const ids = new BigInt64Array(count);
  const amounts = new Float64Array(count);
  const ts = new BigInt64Array(count);
  const cats = new Int32Array(count);
  const names = new Array(count);
  for (let k = 0; k < count; k++) {
    const i = start + k;
    const id = ((i * KEY_STRIDE) % total) * idStride;
    ids[k] = BigInt(id);
    names[k] = `customer-${id.toString(36).padStart(8, '0')}`;
    amounts[k] = (id % 100_000) / 100;
    ts[k] = BigInt(BASE_MS + id * 1000);
    cats[k] = id % 97;
  }
  const children = [
    arrow.makeData({ type: SCHEMA.fields[0].type, length: count, nullCount: 0, data: ids }),
    arrow.vectorFromArray(names, new arrow.Utf8()).data[0],
    arrow.makeData({ type: SCHEMA.fields[2].type, length: count, nullCount: 0, data: amounts }),
    arrow.makeData({ type: SCHEMA.fields[3].type, length: count, nullCount: 0, data: ts }),
    arrow.makeData({ type: SCHEMA.fields[4].type, length: count, nullCount: 0, data: cats }),
  ];
  return new arrow.RecordBatch(SCHEMA, arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: count, nullCount: 0, children }));
}

async function build({ engine: root, location, s3, rows, buckets = 8, batchRows = 100_000, compact = true, options = {}, idStride = 1 }) {
  const engine = await engineOf(root);
  const io = fileIOOf(engine, location, s3);
  try {
    if (await io.exists(`${location}/READY`)) return { reused: true };
    const t0 = performance.now();
    await engine.core.createTable(io, location, { fields: FIELDS, primaryKeys: ['id'], options: { bucket: String(buckets), ...options } });
    const table = await engine.core.openTable(location, { fileIO: io });
    for (let s = 0; s < rows; s += batchRows)
      await table.append(new arrow.Table([rowsBatch(s, Math.min(batchRows, rows - s), rows, idStride)]));
    const writeMs = performance.now() - t0;
    if (compact) await engine.maintenance.compactPrimaryKeyTable(await engine.core.openTable(location, { fileIO: io }), { full: true });
    const plan = await (await engine.core.openTable(location, { fileIO: io })).newRead().plan();
    const files = plan.splits.reduce((n, s) => n + s.files.length, 0);
    await io.write(`${location}/READY`, new TextEncoder().encode(JSON.stringify({ rows, files })));
    return { reused: false, writeMs, buildMs: performance.now() - t0, files };
  } finally {
    await io.close?.();
  }
}

/** A FileIO counting requests by what they touch, per measured call. */
function counted(inner) {
  let n = fresh();
  function fresh() {
    return { all: 0, data: 0, fileIndex: 0, manifest: 0, snapshot: 0, index: 0 };
  }
  const io = instrumentFileIO(inner, {
    start(request) {
      n.all++;
      const p = String(request.path ?? '');
      if (p.includes('/bucket-') && p.endsWith('.index')) n.fileIndex++;
      else if (p.includes('/bucket-')) n.data++;
      else if (p.includes('/manifest/')) n.manifest++;
      else if (p.includes('/snapshot/')) n.snapshot++;
      else if (p.includes('/index/')) n.index++;
    },
  });
  return {
    io,
    take() {
      const r = n;
      n = fresh();
      return r;
    },
  };
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p + 0.5))];
}

async function lookups({
  engine: root,
  location,
  s3,
  rows,
  lookups = 40,
  inKeys = 1000,
  inRuns = 3,
  fullRuns = 3,
  seed = 7,
  idStride = 1,
  absentLookups = 0,
}) {
  const engine = await engineOf(root);
  const raw = fileIOOf(engine, location, s3);
  const { io, take } = counted(raw);
  const random = seededRandom(seed);
  // With idStride 2 the table holds the even ids only: an odd id inside the range is an absent key.
  const key = () => Math.floor(random() * rows) * idStride;
  const fileIndex = { filesSkipped: 0, sidecarReads: 0 };
  const read = async (k) => {
    const r = table.newRead({ where: `id = ${k}` });
    const t = await r.toArrowTable();
    // The code before the file index has no such counts.
    fileIndex.filesSkipped += r.fileIndexStats?.filesSkipped ?? 0;
    fileIndex.sidecarReads += r.fileIndexStats?.sidecarReads ?? 0;
    return t;
  };
  let table;
  try {
    table = await engine.core.openTable(location, { fileIO: io });
    const one = async (k) => {
      const t = await read(k);
      if (t.numRows !== 1 || BigInt(t.getChild('id').get(0)) !== BigInt(k)) throw new Error(`lookup of id ${k} returned ${t.numRows} rows`);
    };
    take();
    const first = await timed(() => one(key()));
    const firstRequests = take();
    const times = [];
    const requests = { all: 0, data: 0, fileIndex: 0, manifest: 0, snapshot: 0, index: 0 };
    fileIndex.filesSkipped = 0;
    fileIndex.sidecarReads = 0;
    // CPU of the process (main thread and decode workers) over the lookups: what a loaded machine cannot hide.
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < lookups; i++) {
      const r = await timed(() => one(key()));
      times.push(r.ms);
      const n = take();
      for (const k of Object.keys(requests)) requests[k] += n[k];
    }
    const cpu = process.cpuUsage(cpuStart);
    const cpuMsPerKey = (cpu.user + cpu.system) / 1000 / Math.max(1, lookups);
    const presentFileIndex = { ...fileIndex };
    // Keys the table does not hold, inside its id range (so statistics cannot rule files out).
    const absentTimes = [];
    const absentRequests = { all: 0, data: 0, fileIndex: 0, manifest: 0, snapshot: 0, index: 0 };
    fileIndex.filesSkipped = 0;
    fileIndex.sidecarReads = 0;
    for (let i = 0; i < absentLookups; i++) {
      const k = key() + 1;
      const r = await timed(() => read(k));
      if (r.value.numRows !== 0) throw new Error(`lookup of absent id ${k} returned ${r.value.numRows} rows`);
      absentTimes.push(r.ms);
      const n = take();
      for (const c of Object.keys(absentRequests)) absentRequests[c] += n[c];
    }
    const fullTimes = [];
    for (let i = 0; i < fullRuns; i++) {
      const r = await timed(() => table.newRead({ columns: ['id'] }).toArrowTable());
      if (r.value.numRows !== rows) throw new Error(`full read returned ${r.value.numRows} rows, expected ${rows}`);
      fullTimes.push(r.ms);
    }
    take();
    const inTimes = [];
    let inRequests = null;
    for (let i = 0; i < inRuns; i++) {
      const keys = new Set();
      while (keys.size < Math.min(inKeys, rows)) keys.add(key());
      const where = `id IN (${[...keys].join(', ')})`;
      const r = await timed(() => table.newRead({ where }).toArrowTable());
      if (r.value.numRows !== keys.size) throw new Error(`IN read of ${keys.size} keys returned ${r.value.numRows} rows`);
      inTimes.push(r.ms);
      inRequests ??= take();
    }
    const perKey = Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, v / Math.max(1, lookups)]));
    return {
      firstMs: first.ms,
      firstRequests,
      lookups,
      p50Ms: median(times),
      p90Ms: percentile(times, 0.9),
      maxMs: Math.max(...times),
      requestsPerKey: perKey,
      cpuMsPerKey,
      fullIdReadMs: median(fullTimes),
      fullIdReadRuns: fullTimes,
      inKeys,
      inMs: median(inTimes),
      inRuns: inTimes,
      inKeysPerSec: inKeys / (median(inTimes) / 1000),
      inRequests,
      fileIndexPerKey: {
        filesSkipped: presentFileIndex.filesSkipped / Math.max(1, lookups),
        sidecarReads: presentFileIndex.sidecarReads / Math.max(1, lookups),
      },
      absent:
        absentLookups === 0
          ? null
          : {
              lookups: absentLookups,
              p50Ms: median(absentTimes),
              p90Ms: percentile(absentTimes, 0.9),
              requestsPerKey: Object.fromEntries(Object.entries(absentRequests).map(([k, v]) => [k, v / absentLookups])),
              filesSkippedPerKey: fileIndex.filesSkipped / absentLookups,
            },
    };
  } finally {
    await table?.close();
    await raw.close?.();
  }
}

/** Runs the CLI's `main` in-process; returns its exit code, output and wall time. */
async function cli(engine, argv) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const code = await engine.cli.main(argv, { stdout, stderr, stdin: new PassThrough() });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (code !== 0) throw new Error(`tidemark ${argv.slice(0, 2).join(' ')} exited ${code}: ${err.slice(-1000)}`);
  // CPU of the process (main thread and workers) during the command: what a loaded machine cannot hide.
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, out };
}

async function deleteKeys({ engine: root, location, rows, keys = 5000, countKeys = 4000, seed = 11, workDir }) {
  const engine = await engineOf(root);
  const random = seededRandom(seed);
  const chosen = new Set();
  while (chosen.size < keys) chosen.add(Math.floor(random() * rows));
  await mkdir(workDir, { recursive: true });
  const input = path.join(workDir, `keys-${process.pid}.jsonl`);
  await writeFile(input, [...chosen].map((id) => JSON.stringify({ id })).join('\n') + '\n');
  const del = await cli(engine, ['delete', location, '--input', input, '--json']);
  const deleted = JSON.parse(del.out.trim().split('\n').pop()).deleted;
  // Keys that are still there: a count by IN must find every one of them.
  const remaining = [];
  for (let id = 0; remaining.length < countKeys && id < rows; id++) if (!chosen.has(id)) remaining.push(id);
  const count = await cli(engine, ['count', location, '--where', `id IN (${remaining.join(', ')})`, '--json']);
  const counted = JSON.parse(count.out.trim().split('\n').pop()).rows;
  if (deleted !== keys || counted !== remaining.length)
    throw new Error(`delete removed ${deleted} of ${keys} keys; count found ${counted} of ${remaining.length}`);
  return { keys, deleteMs: del.ms, deleteCpuMs: del.cpuMs, countKeys: remaining.length, countMs: count.ms };
}

await childMain({ build, lookups, deleteKeys });
