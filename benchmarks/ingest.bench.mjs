// Exactly-once ingest throughput: `runIngest` of @tidemark/sink (dist) over a JSON-lines
// file into a local append table, with a checkpoint every 10,000 and every 100,000 records
// (state in a local directory), against a plain batch write of the same data (parse the same file,
// TableWrite in 10,000-row batches, one commit). Reports records/s and, per checkpoint, the latency
// of the whole checkpoint (flush + in-flight record + state + commit) and of the commit alone.
// Local disk only. Records: TIDEMARK_BENCH_INGEST_RECORDS (default 200,000).
// Run with `npm run bench -- ingest` or `node benchmarks/ingest.bench.mjs`.
import { createReadStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { LocalFileIO } from '@tidemark/storage';
import { serializeSchema } from '@tidemark/format';
import { FileStoreCommit, TablePaths, TableWrite, buildInitialSchema } from '@tidemark/core';
import { JsonLinesFileSource, LocalDirCheckpointStore, runIngest } from '@tidemark/sink';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable } from './lib/report.mjs';
import { runIfMain } from './lib/standalone.mjs';
import { ingestRow } from './lib/ingest-rows.mjs';
import { percentile } from './lib/stats.mjs';

export const name = 'ingest';

const RECORDS = Number(process.env.TIDEMARK_BENCH_INGEST_RECORDS ?? 200_000);

const spec = {
  fields: [
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'name', type: 'STRING' },
    { name: 'v', type: 'DOUBLE' },
    { name: 'ts', type: 'TIMESTAMP(3)' },
  ],
  options: { bucket: '-1', 'file.format': 'parquet' },
};

async function makeTable(io, dir) {
  await rm(dir, { recursive: true, force: true });
  const schema = buildInitialSchema(spec);
  await io.write(`${dir}/schema/schema-0`, serializeSchema(schema));
  return schema;
}

async function batchWrite(io, dir, source) {
  const schema = await makeTable(io, dir);
  const t0 = performance.now();
  const w = new TableWrite(io, dir, schema);
  let buf = [];
  const rl = createInterface({ input: createReadStream(source), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line === '') continue;
    buf.push(JSON.parse(line));
    if (buf.length === 10_000) {
      await w.write(buf);
      buf = [];
    }
  }
  if (buf.length > 0) await w.write(buf);
  const messages = await w.prepareCommit();
  const c0 = performance.now();
  await new FileStoreCommit(io, new TablePaths(dir), schema).commit(
    { identifier: 9223372036854775807n, messages },
    { commitUser: 'bench' },
  );
  const end = performance.now();
  return { seconds: (end - t0) / 1000, commitMs: [end - c0] };
}

async function ingest(io, dir, source, every) {
  await makeTable(io, dir);
  const stateDir = `${dir}-state`;
  await rm(stateDir, { recursive: true, force: true });
  const checkpointMs = [];
  const commitMs = [];
  const t0 = performance.now();
  const summary = await runIngest({
    table: dir,
    fileIO: io,
    source: new JsonLinesFileSource(source),
    stateStore: new LocalDirCheckpointStore(stateDir),
    checkpointEvery: every,
    batchSize: 10_000,
    onCheckpoint: (info) => {
      checkpointMs.push(info.durationMs);
      for (const c of info.commits) commitMs.push(c.durationMs);
    },
  });
  if (summary.records !== RECORDS) throw new Error(`ingested ${summary.records} records, expected ${RECORDS}`);
  return { seconds: (performance.now() - t0) / 1000, checkpointMs, commitMs };
}

export async function run({ log = console.error } = {}) {
  const work = path.join(WORK_DIR, 'ingest');
  await mkdir(work, { recursive: true });
  const source = path.join(work, 'source.jsonl');
  const lines = [];
  for (let i = 0; i < RECORDS; i++) lines.push(JSON.stringify({ id: i, name: `name-${i % 9973}`, v: i * 0.5, ts: 1_700_000_000_000 + i }));
  await writeFile(source, `${lines.join('\n')}\n`);
  const io = new LocalFileIO();
  const rows = [];
  const cases = [
    ['batch write (one commit)', () => batchWrite(io, path.join(work, 'batch'), source)],
    ['ingest, checkpoint every 10,000', () => ingest(io, path.join(work, 'ckpt-10k'), source, 10_000)],
    ['ingest, checkpoint every 100,000', () => ingest(io, path.join(work, 'ckpt-100k'), source, 100_000)],
  ];
  for (const [label, fn] of cases) {
    log(`[ingest] ${label}`);
    const r = await fn();
    const cm = [...r.commitMs].sort((a, b) => a - b);
    rows.push({
      ...ingestRow(label, RECORDS, r),
      'commit p50 ms': percentile(cm, 50),
      'commit max ms': cm[cm.length - 1],
    });
  }
  await rm(work, { recursive: true, force: true });
  const json = { name, date: new Date().toISOString(), environment: environment(), records: RECORDS, rows };
  const markdown = [
    '# Exactly-once ingest throughput',
    '',
    `${fmtInt(RECORDS)} JSON-lines records (BIGINT, STRING, DOUBLE, TIMESTAMP) into a local append table, one writer.`,
    'Checkpoint latency = flush of the writer + in-flight record + checkpoint state + commit; commit = file checks + snapshot commit.',
    '',
    markdownTable(
      ['case', 'records/s', 'seconds', 'checkpoints', 'checkpoint p50 ms', 'checkpoint max ms', 'commit p50 ms', 'commit max ms'],
      rows.map((r) => [
        r.case,
        fmtInt(Math.round(r['records/s'])),
        fmtNum(r.seconds, 2),
        r.checkpoints || '–',
        r['checkpoint p50 ms'] === null ? '–' : fmtNum(r['checkpoint p50 ms']),
        r['checkpoint max ms'] === null ? '–' : fmtNum(r['checkpoint max ms']),
        fmtNum(r['commit p50 ms']),
        fmtNum(r['commit max ms']),
      ]),
    ),
    '',
  ].join('\n');
  return { name, json, markdown };
}

await runIfMain(import.meta.url, () => run());
