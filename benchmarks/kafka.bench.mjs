// Kafka ingest throughput: `runIngest` with a `KafkaSource` (dist) from the Kafka test broker
// (librdkafka's mock cluster, test/kafka/) into a local append table and into a primary-key table
// with deletion vectors, side by side in one run with the same records from a JSON-lines file
// (`JsonLinesFileSource`, the target: Kafka ≥ 0.8 × the file rate), with the source alone (the
// KafkaSource's fetch loop and decoding, no table) and with the raw client's consume rate from the
// same broker (a kafkajs group consumer, JSON-parsing each message: the client's own limit).
// Records are produced once, gzip-compressed with kcat (the mock keeps 5 MiB per partition).
// Each case runs twice, alternating Kafka and file; the better run counts. The load average is
// recorded before and after (the machine is shared).
// Records: TIDEMARK_BENCH_KAFKA_RECORDS (default 200,000). `npm run bench -- kafka` or
// `node benchmarks/kafka.bench.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { LocalFileIO } from '@tidemark/storage';
import { serializeSchema } from '@tidemark/format';
import { buildInitialSchema } from '@tidemark/core';
import { CDC_ROW_KIND_FIELD, JsonLinesFileSource, KafkaSource, LocalDirCheckpointStore, runIngest } from '@tidemark/sink';
import { KafkaTestBroker, kafkaBrokerBinary } from '../test/kafka/broker.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable } from './lib/report.mjs';
import { runIfMain } from './lib/standalone.mjs';

export const name = 'kafka';

const RECORDS = Number(process.env.TIDEMARK_BENCH_KAFKA_RECORDS ?? 200_000);
const PARTITIONS = 4;
const CHECKPOINT_EVERY = 50_000;

const fields = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'name', type: 'STRING' },
  { name: 'v', type: 'DOUBLE' },
  { name: 'ts', type: 'TIMESTAMP(3)' },
];
const TABLES = {
  append: { fields, options: { bucket: '-1', 'file.format': 'parquet' } },
  'pk-dv': { fields, primaryKeys: ['id'], options: { bucket: '4', 'file.format': 'parquet', 'deletion-vectors.enabled': 'true' } },
};

async function makeTable(io, dir, kind) {
  await rm(dir, { recursive: true, force: true });
  await rm(`${dir}-state`, { recursive: true, force: true });
  await io.write(`${dir}/schema/schema-0`, serializeSchema(buildInitialSchema(TABLES[kind])));
}

async function ingest(io, dir, kind, source, rowKindField) {
  await makeTable(io, dir, kind);
  const t0 = performance.now();
  const summary = await runIngest({
    table: dir,
    fileIO: io,
    source,
    stateStore: new LocalDirCheckpointStore(`${dir}-state`),
    checkpointEvery: CHECKPOINT_EVERY,
    batchSize: 10_000,
    ...(rowKindField ? { rowKindField } : {}),
  });
  const seconds = (performance.now() - t0) / 1000;
  if (summary.records !== RECORDS) throw new Error(`ingested ${summary.records} records, expected ${RECORDS}`);
  return seconds;
}

/** The KafkaSource alone: fetch, decode, offsets, no table. */
async function sourceOnly(source) {
  const t0 = performance.now();
  let n = 0;
  for await (const r of source.open(null)) if (r.value) n++;
  if (n !== RECORDS) throw new Error(`read ${n} records, expected ${RECORDS}`);
  return (performance.now() - t0) / 1000;
}

/** kafkajs's group consumer, JSON-parsing each message; timed from the first batch (the group join excluded). */
async function rawConsume(broker, topic) {
  const kafka = new Kafka({ brokers: broker.brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `bench-${Date.now()}`, sessionTimeout: 6000, rebalanceTimeout: 6000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let n = 0;
  let first;
  let finished;
  const done = new Promise((resolve) => (finished = resolve));
  await consumer.run({
    eachBatchAutoResolve: true,
    eachBatch: async ({ batch }) => {
      first ??= performance.now();
      for (const m of batch.messages) if (JSON.parse(m.value.toString('utf8')).id >= 0) n++;
      if (n >= RECORDS) finished(performance.now());
    },
  });
  const end = await done;
  await consumer.disconnect();
  return (end - first) / 1000;
}

const best = (xs) => Math.min(...xs);

export async function run({ log = console.error } = {}) {
  const { binary, reason } = kafkaBrokerBinary((m) => log(`[kafka] ${m}`));
  if (!binary) throw new Error(`the Kafka test broker cannot be built here: ${reason}`);
  const loadBefore = os.loadavg();
  const work = path.join(WORK_DIR, 'kafka');
  await mkdir(work, { recursive: true });
  const file = path.join(work, 'source.jsonl');
  const lines = [];
  for (let i = 0; i < RECORDS; i++) lines.push(JSON.stringify({ id: i, name: `name-${i % 9973}`, v: i * 0.5, ts: 1_700_000_000_000 + i }));
  await writeFile(file, `${lines.join('\n')}\n`);
  const bytes = lines.reduce((n, l) => n + l.length + 1, 0);

  const broker = await KafkaTestBroker.start({ binary, brokers: 1, topics: { bench: PARTITIONS } });
  const io = new LocalFileIO();
  const rows = [];
  try {
    log(`[kafka] producing ${fmtInt(RECORDS)} records with kcat (gzip)`);
    const kcat = spawnSync('kcat', ['-b', broker.bootstrap, '-P', '-t', 'bench', '-z', 'gzip', '-l', file], { encoding: 'utf8' });
    if (kcat.status !== 0) throw new Error(`kcat failed: ${kcat.stderr}`);
    const kafkaSource = (kind) =>
      new KafkaSource({
        connection: { brokers: broker.brokers },
        topics: ['bench'],
        untilEnd: true,
        ...(kind === 'pk-dv' ? { primaryKeys: ['id'] } : {}),
      });
    const times = {};
    const record = (label, seconds) => (times[label] ??= []).push(seconds);
    for (let round = 0; round < 2; round++) {
      log(`[kafka] round ${round + 1}: raw kafkajs consumer`);
      record('raw kafkajs consumer (group, JSON.parse)', await rawConsume(broker, 'bench'));
      const only = kafkaSource('append');
      record('KafkaSource alone (fetch loop, decode, offsets)', await sourceOnly(only));
      await only.close();
      for (const kind of ['append', 'pk-dv']) {
        log(`[kafka] round ${round + 1}: ${kind}: file, then Kafka`);
        record(`file → ${kind}`, await ingest(io, path.join(work, `file-${kind}`), kind, new JsonLinesFileSource(file)));
        const s = kafkaSource(kind);
        record(
          `Kafka → ${kind}`,
          await ingest(io, path.join(work, `kafka-${kind}`), kind, s, kind === 'pk-dv' ? CDC_ROW_KIND_FIELD : undefined),
        );
        await s.close();
      }
    }
    for (const [label, secs] of Object.entries(times))
      rows.push({ case: label, seconds: best(secs), runs: secs, 'records/s': RECORDS / best(secs) });
  } finally {
    await broker.stop();
    await io.close();
    await rm(work, { recursive: true, force: true });
  }
  const loadAfter = os.loadavg();
  const rate = (label) => rows.find((r) => r.case === label)['records/s'];
  const ratios = {
    append: rate('Kafka → append') / rate('file → append'),
    'pk-dv': rate('Kafka → pk-dv') / rate('file → pk-dv'),
  };
  const json = {
    name,
    date: new Date().toISOString(),
    environment: environment(),
    records: RECORDS,
    bytes,
    partitions: PARTITIONS,
    checkpointEvery: CHECKPOINT_EVERY,
    loadAverage: { before: loadBefore, after: loadAfter },
    rows,
    ratios,
    target: 'Kafka ≥ 0.8 × the file-source rate',
  };
  const markdown = [
    '# Kafka ingest throughput',
    '',
    `${fmtInt(RECORDS)} JSON records (BIGINT, STRING, DOUBLE, TIMESTAMP; ${fmtNum(bytes / RECORDS, 0)} bytes each) in ${PARTITIONS} partitions of the`,
    "Kafka test broker (librdkafka's mock cluster on this machine, produced gzip-compressed with kcat), and the same records",
    `in a JSON-lines file; one writer, a checkpoint every ${fmtInt(CHECKPOINT_EVERY)} records, state in a local directory, local tables:`,
    "an append table and a primary-key table with deletion vectors (4 buckets; Kafka's json format makes each message an upsert).",
    'Each case ran twice, alternating Kafka and file; the better run is shown (both runs in the JSON).',
    '',
    markdownTable(
      ['case', 'records/s', 'seconds'],
      rows.map((r) => [r.case, fmtInt(Math.round(r['records/s'])), fmtNum(r.seconds, 2)]),
    ),
    '',
    `Kafka / file: append ${fmtNum(ratios.append, 2)}, primary key + DV ${fmtNum(ratios['pk-dv'], 2)} (target ≥ 0.8).`,
    '',
    `Load average (1, 5, 15 min) before: ${loadBefore.map((x) => fmtNum(x, 2)).join(', ')}; after: ${loadAfter.map((x) => fmtNum(x, 2)).join(', ')} ` +
      `on ${os.cpus().length} cores (a machine shared with other jobs: compare the ratios, measured in one run, rather than the rates).`,
    '',
    'The raw consumer is timed from its first batch (the group join, about 3 s, is left out); the KafkaSource is timed from `open()`,',
    'with its metadata and watermark requests.',
    '',
  ].join('\n');
  return { name, json, markdown };
}

await runIfMain(import.meta.url, () => run());
