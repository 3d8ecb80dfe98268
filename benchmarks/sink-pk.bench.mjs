// Exactly-once ingest into a primary-key table, with and without compaction in the sink's writers:
// `runIngest` of @tidemark/sink (dist) over an in-memory source of upserts (TIDEMARK_BENCH_SINK_PK_RECORDS,
// default 100,000, over a fifth as many keys) into a local table with 4 buckets, one checkpoint
// every 10,000 records, two writers. Cases: `write-only` (level 0 only, the sink before its writers
// compacted), universal compaction (the default), deletion vectors, `changelog-producer` = lookup,
// and a dynamic-bucket table (`bucket` = -1, `dynamic-bucket.target-row-num` = a quarter of the keys,
// so again 4 buckets) written-only and compacting: its writers receive records by assigned bucket.
// Reports records/s, checkpoint latency, what the table holds afterwards (level-0 files, live data
// files, COMPACT snapshots) and the time of a full batch read of it (merge-on-read cost).
// Local disk only. Run with `npm run bench -- sink-pk` or `node benchmarks/sink-pk.bench.mjs`.
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalFileIO } from '@tidemark/storage';
import { serializeSchema } from '@tidemark/format';
import { buildInitialSchema, liveEntries, openTable } from '@tidemark/core';
import { LocalDirCheckpointStore, runIngest } from '@tidemark/sink';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable } from './lib/report.mjs';
import { runIfMain } from './lib/standalone.mjs';
import { ingestRow } from './lib/ingest-rows.mjs';

export const name = 'sink-pk';

const RECORDS = Number(process.env.TIDEMARK_BENCH_SINK_PK_RECORDS ?? 100_000);
const KEYS = Math.max(1, Math.floor(RECORDS / 5));
const EVERY = 10_000;

/** Upserts of KEYS keys; record i sets key (i * 7919) % KEYS. */
class UpsertSource {
  bounded = true;
  id = 'bench:upserts';
  async *open(from) {
    for (let i = from ?? 0; i < RECORDS; i++) {
      const k = (i * 7919) % KEYS;
      yield { value: { k, name: `name-${k}-${i}`, v: i * 0.5 }, offset: i + 1 };
    }
  }
}

async function makeTable(io, dir, options) {
  await rm(dir, { recursive: true, force: true });
  const schema = buildInitialSchema({
    fields: [
      { name: 'k', type: 'BIGINT NOT NULL' },
      { name: 'name', type: 'STRING' },
      { name: 'v', type: 'DOUBLE' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '4', 'file.format': 'parquet', ...options },
  });
  await io.write(`${dir}/schema/schema-0`, serializeSchema(schema));
}

async function ingest(io, dir, options) {
  await makeTable(io, dir, options);
  const stateDir = `${dir}-state`;
  await rm(stateDir, { recursive: true, force: true });
  const checkpointMs = [];
  const t0 = performance.now();
  const summary = await runIngest({
    table: dir,
    fileIO: io,
    source: new UpsertSource(),
    stateStore: new LocalDirCheckpointStore(stateDir),
    checkpointEvery: EVERY,
    parallelism: 2,
    batchSize: 5_000,
    onCheckpoint: (info) => checkpointMs.push(info.durationMs),
  });
  const seconds = (performance.now() - t0) / 1000;
  if (summary.records !== RECORDS) throw new Error(`ingested ${summary.records} records, expected ${RECORDS}`);
  const table = await openTable(dir, { fileIO: io });
  const latest = await table.snapshotManager.latest();
  let level0 = 0;
  let files = 0;
  for (const e of (await liveEntries(io, table.paths, latest)).values()) {
    files++;
    if (e.file.level === 0) level0++;
  }
  let compactSnapshots = 0;
  for await (const s of table.snapshotManager.iterateForward()) if (s.commitKind === 'COMPACT') compactSnapshots++;
  const r0 = performance.now();
  const rows = (await table.newRead().toArrowTable()).numRows;
  const readMs = performance.now() - r0;
  if (rows !== KEYS) throw new Error(`read ${rows} rows, expected ${KEYS} keys`);
  await table.close();
  return { seconds, checkpointMs, level0, files, compactSnapshots, readMs };
}

export async function run({ log = console.error } = {}) {
  const work = path.join(WORK_DIR, 'sink-pk');
  await mkdir(work, { recursive: true });
  const io = new LocalFileIO();
  const load = os.loadavg().map((l) => l.toFixed(1));
  const cases = [
    ['write-only (no compaction)', { 'write-only': 'true' }],
    ['universal compaction (default)', {}],
    ['deletion vectors', { 'deletion-vectors.enabled': 'true' }],
    ['changelog-producer = lookup', { 'changelog-producer': 'lookup' }],
    // A quarter of the keys per bucket: 4 buckets, as the fixed-bucket cases.
    ['dynamic buckets, write-only', { bucket: '-1', 'dynamic-bucket.target-row-num': String(Math.ceil(KEYS / 4)), 'write-only': 'true' }],
    ['dynamic buckets, universal compaction', { bucket: '-1', 'dynamic-bucket.target-row-num': String(Math.ceil(KEYS / 4)) }],
  ];
  const rows = [];
  for (const [label, options] of cases) {
    log(`[sink-pk] ${label}`);
    const r = await ingest(io, path.join(work, `t${rows.length}`), options);
    rows.push({
      ...ingestRow(label, RECORDS, r),
      'level-0 files': r.level0,
      'live data files': r.files,
      'COMPACT snapshots': r.compactSnapshots,
      'full read ms': r.readMs,
    });
  }
  await rm(work, { recursive: true, force: true });
  const json = { name, date: new Date().toISOString(), environment: environment(), loadAverage: load, records: RECORDS, keys: KEYS, rows };
  const markdown = [
    '# Exactly-once ingest into a primary-key table: compaction in the writers',
    '',
    `${fmtInt(RECORDS)} upserts of ${fmtInt(KEYS)} keys (BIGINT key, STRING, DOUBLE) into a local table with 4 buckets (fixed, or dynamic filled to 4), two writers,`,
    `a checkpoint every ${fmtInt(EVERY)} records. Afterwards: live files of the latest snapshot, and one full batch read of it.`,
    'Dynamic buckets fill in the order keys arrive: each checkpoint here updates the keys of two of the four buckets.',
    `Measured on a machine shared with other jobs (2 cores, load average ${load.join(' / ')} at the start): compare the rows with each other, not with other runs.`,
    '',
    markdownTable(
      [
        'case',
        'records/s',
        'seconds',
        'checkpoints',
        'checkpoint p50 ms',
        'checkpoint max ms',
        'level-0 files',
        'live data files',
        'COMPACT snapshots',
        'full read ms',
      ],
      rows.map((r) => [
        r.case,
        fmtInt(Math.round(r['records/s'])),
        fmtNum(r.seconds, 2),
        r.checkpoints,
        fmtNum(r['checkpoint p50 ms']),
        fmtNum(r['checkpoint max ms']),
        r['level-0 files'],
        r['live data files'],
        r['COMPACT snapshots'],
        fmtNum(r['full read ms']),
      ]),
    ),
    '',
  ].join('\n');
  return { name, json, markdown };
}

await runIfMain(import.meta.url, () => run());
