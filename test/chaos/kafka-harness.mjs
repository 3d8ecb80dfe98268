#!/usr/bin/env node
// Crash-injection harness for `tidemark ingest --source kafka://...` (see harness.mjs for the file
// source). Each trial creates a 3-partition topic on the Kafka test broker and a table, produces a
// first share of the messages, then keeps producing the rest while it runs the ingest CLI
// (`--until-end`) as a child process, killing it with SIGKILL at random moments and at the sink's
// named crash points, and restarting it until a run that started after the last message reports
// the source done.
//
// - append trials (`json`): every message must be in the table exactly once (ids, checksums);
// - primary-key trials (`debezium-json`, deletion vectors): a simulated source database emits
//   inserts, updates and deletes (some deletes without a before image, so the key decides, and
//   Debezium's tombstones after deletes); the table must equal the database's final state.
// Both check every checkpoint a run completed: the table read (batch read, so level-0 files of a
// deletion-vector table are skipped) at that checkpoint's snapshot equals the messages before the
// snapshot's stored offsets, exactly once. They also check that the consumer group got the final
// offsets and that no in-flight record of the sink is left.
//
//   npm run chaos -- --kafka [--pk] --trials 200 [--records 300] [--checkpoint-every 50] [--concurrency 3]
//
// The children import the packages from dist: run `npx turbo run build` first.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { seededRandom as rng } from '../support/seeded-random.mjs';
import { checkInflightCleared, checksum, crashPointsOf, ingestArgs, runTrials, runUntilDone, writeChaosSchema } from './ingest-process.mjs';

const PARTITIONS = 3;

/** The messages of a trial, in production order, each with the records it makes (row kind, row). */
function appendMessages(K, rand) {
  const out = [];
  for (let i = 0; i < K; i++) {
    const payload = randomBytes(6 + Math.floor(rand() * 20)).toString('base64');
    const row = { id: i, payload, checksum: checksum(i, payload) };
    out.push({ partition: Math.floor(rand() * PARTITIONS), key: null, value: JSON.stringify(row), records: [['+I', row]] });
  }
  return out;
}

/** A source database's change stream as Debezium writes it: keyed by id, so one key stays in one partition. */
function debeziumMessages(K, rand) {
  const db = new Map();
  const keys = Math.max(1, Math.floor(K / 3));
  const out = [];
  const envelope = (payload) => (rand() < 0.5 ? { schema: { type: 'struct' }, payload } : payload);
  for (let i = 0; out.length < K; i++) {
    const id = Math.floor(rand() * keys);
    const partition = id % PARTITIONS;
    const key = JSON.stringify(rand() < 0.5 ? { schema: { type: 'struct' }, payload: { id } } : { id });
    const before = db.get(id);
    const source = { db: 'shop', table: 'items' };
    if (before !== undefined && rand() < 0.15) {
      db.delete(id);
      // PostgreSQL without REPLICA IDENTITY FULL sends no before image: the key names the row.
      const keyOnly = rand() < 0.3;
      out.push({
        partition,
        key,
        value: JSON.stringify(envelope({ op: 'd', before: keyOnly ? null : before, after: null, source })),
        records: [['-D', { id }]],
      });
      if (rand() < 0.5) out.push({ partition, key, value: null, records: [] }); // the tombstone after a delete
      continue;
    }
    const payload = `${i}:${randomBytes(4 + Math.floor(rand() * 12)).toString('base64')}`;
    const row = { id, payload, checksum: checksum(id, payload) };
    db.set(id, row);
    if (before === undefined) {
      out.push({ partition, key, value: JSON.stringify(envelope({ op: 'c', before: null, after: row, source })), records: [['+I', row]] });
    } else {
      out.push({
        partition,
        key,
        value: JSON.stringify(envelope({ op: 'u', before, after: row, source })),
        records: [
          ['-U', before],
          ['+U', row],
        ],
      });
    }
  }
  return { messages: out, finalState: db };
}

/**
 * What the table must hold at a stored offset: per partition, the records of the messages before
 * `next`, and the first `skip` records of message `next` (a checkpoint between -U and +U).
 * Append: id → { checksum, count }; primary key: id → checksum of the live row.
 */
function expectedAt(byPartition, offset, topic, pk) {
  const state = new Map();
  const parts = offset?.[topic] ?? {};
  for (let p = 0; p < PARTITIONS; p++) {
    const pos = parts[p];
    const next = typeof pos === 'number' ? pos : (pos?.offset ?? 0);
    const skip = typeof pos === 'number' ? 0 : (pos?.skip ?? 0);
    const msgs = byPartition[p];
    const apply = ([kind, row]) => {
      if (!pk) state.set(row.id, { checksum: row.checksum, count: (state.get(row.id)?.count ?? 0) + 1 });
      else if (kind === '+I' || kind === '+U') state.set(row.id, row.checksum);
      else state.delete(row.id);
    };
    for (let o = 0; o < next && o < msgs.length; o++) msgs[o].records.forEach(apply);
    if (skip > 0 && msgs[next]) msgs[next].records.slice(0, skip).forEach(apply);
  }
  return state;
}

/** Differences between the rows read and the expected state (empty when equal). */
function compare(rows, expected, pk, what) {
  const problems = [];
  const seen = new Map();
  for (const r of rows) {
    const id = Number(r.id);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    const want = expected.get(id);
    const sum = pk ? want : want?.checksum;
    if (sum === undefined) problems.push(`${what}: row ${id} should not be there`);
    else if (r.checksum !== sum || checksum(id, r.payload) !== sum) problems.push(`${what}: row ${id} has a wrong version or checksum`);
  }
  for (const [id, n] of seen) if (n > 1) problems.push(`${what}: row ${id} is there ${n} times`);
  for (const id of expected.keys()) if (!seen.has(id)) problems.push(`${what}: row ${id} is missing`);
  return problems.slice(0, 5).concat(problems.length > 5 ? [`${what}: … ${problems.length - 5} more differences`] : []);
}

/** Runs one trial; resolves with { ok, trial, seed, runs, kills, checkpointsChecked, lost, duplicated, problems }. */
export async function runKafkaTrial(config) {
  const { trial, seed, records: K, checkpointEvery, broker, workDir, maxRuns = 60, crashRate = 0.85, pk = false } = config;
  const rand = rng(seed);
  const parallelism = 1 + Math.floor(rand() * 3);
  const { LocalFileIO } = await import('@tidemark/storage');
  const { openTable, listInflightRecords } = await import('@tidemark/core');
  const { CRASH_POINTS: ALL_POINTS, OFFSETS_PROPERTY, decodeSinkJson, defaultGroupId } = await import('@tidemark/sink');
  const CRASH_POINTS = crashPointsOf(ALL_POINTS, pk);
  const dir = join(workDir, `trial-${trial}`);
  const tablePath = join(dir, 'db.db', 't');
  const statePath = join(dir, 'state');
  const topic = `chaos-${pk ? 'dbz' : 'json'}-${trial}-${randomBytes(4).toString('hex')}`;
  const io = new LocalFileIO();
  const problems = [];
  const kills = {};
  let runs = 0;
  const kafka = new Kafka({ brokers: broker.brokers, clientId: 'tidemark-chaos', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await mkdir(dir, { recursive: true });
    await broker.createTopic(topic, PARTITIONS);
    await writeChaosSchema(io, tablePath, {
      pk,
      rand,
      options: {
        // Every checkpoint's snapshot stays readable for the per-checkpoint check.
        'snapshot.num-retained.min': '100000',
        'snapshot.num-retained.max': '100000',
        ...(pk ? { 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '2' } : {}),
      },
    });
    const generated = pk ? debeziumMessages(K, rand) : { messages: appendMessages(K, rand) };
    const messages = generated.messages;
    const byPartition = Array.from({ length: PARTITIONS }, () => []);
    for (const m of messages) byPartition[m.partition].push(m);

    // The producer: a first share before the first run (so that it reaches a checkpoint), the rest
    // in small batches while the runs go on. Offsets are checked against the production order.
    await producer.connect();
    const produced = new Array(PARTITIONS).fill(0);
    const send = async (batch) => {
      const results = await producer.send({
        topic,
        messages: batch.map((m) => ({ partition: m.partition, key: m.key, value: m.value })),
      });
      for (const r of results) {
        if (Number(r.baseOffset) !== produced[r.partition]) {
          problems.push(`producer: partition ${r.partition} got base offset ${r.baseOffset}, expected ${produced[r.partition]}`);
        }
      }
      for (const m of batch) produced[m.partition]++;
    };
    const head = Math.min(messages.length, checkpointEvery * 2);
    await send(messages.slice(0, head));
    let producerDone = head === messages.length;
    const producing = (async () => {
      for (let i = head; i < messages.length;) {
        const n = 5 + Math.floor(rand() * 20);
        await send(messages.slice(i, i + n));
        i += n;
        await new Promise((r) => setTimeout(r, 10 + Math.floor(rand() * 50)));
      }
      producerDone = true;
    })();

    const source = `kafka://${broker.bootstrap}/${topic}`;
    const args = ingestArgs(
      { tablePath, source, statePath, checkpointEvery, parallelism },
      '--format',
      pk ? 'debezium-json' : 'json',
      '--until-end',
    );
    const checkpointSnapshots = [];
    const ended = await runUntilDone({
      args,
      s3: undefined,
      plan: { trial, points: CRASH_POINTS, maxRuns, crashRate, rand, maxCount: 3, killMs: [200, 2500] },
      kills,
      problems,
      // Done after a run that started once everything was produced.
      isFinalRun: () => producerDone,
      finishes: (_summary, finalRun) => finalRun,
      onOutput: (err) => {
        // Checkpoints this run completed (their lines are printed after the commit).
        for (const m of err.matchAll(/^checkpoint \d+: \d+ records, (.*) \(\d+ ms\)$/gm)) {
          const ids = [...m[1].matchAll(/snapshot (\d+)/g)].map((x) => Number(x[1]));
          if (ids.length > 0) checkpointSnapshots.push(Math.max(...ids));
        }
      },
    });
    runs = ended.runs;
    const { summary, done } = ended;
    await producing;

    let lost = 0;
    let duplicated = 0;
    let checked = 0;
    if (done) {
      const table = await openTable(tablePath, { fileIO: io });
      const rowsAt = async (snapshotId) =>
        (await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable()).toArray().map((r) => r.toJSON());
      // The end: every message once (append), the database's final state (CDC).
      const finalOffset = { [topic]: Object.fromEntries(produced.map((n, p) => [p, n])) };
      const expected = pk
        ? new Map([...generated.finalState].map(([id, row]) => [id, row.checksum]))
        : expectedAt(byPartition, finalOffset, topic, pk);
      const rows = await rowsAt();
      const seen = new Map();
      for (const r of rows) seen.set(Number(r.id), (seen.get(Number(r.id)) ?? 0) + 1);
      for (const id of expected.keys()) if (!seen.has(id)) lost++;
      for (const n of seen.values()) if (n > 1) duplicated += n - 1;
      problems.push(...compare(rows, expected, pk, 'final table'));
      if (JSON.stringify(summary.offset) !== JSON.stringify(finalOffset)) {
        problems.push(`final offset ${JSON.stringify(summary.offset)}, produced ${JSON.stringify(finalOffset)}`);
      }
      // Each completed checkpoint: a batch read at its snapshot holds exactly the messages before its offsets.
      const snapshots = new Map();
      for await (const s of table.snapshotManager.iterateForward()) snapshots.set(s.id, s);
      for (const id of new Set(checkpointSnapshots)) {
        let s;
        for (let i = id; i > 0 && !s; i--) if (snapshots.get(i)?.properties?.[OFFSETS_PROPERTY]) s = snapshots.get(i);
        if (!s) {
          problems.push(`checkpoint snapshot ${id}: no snapshot with sink offsets at or before it`);
          continue;
        }
        const { offset } = decodeSinkJson(s.properties[OFFSETS_PROPERTY], `snapshot ${s.id}`);
        problems.push(...compare(await rowsAt(id), expectedAt(byPartition, offset, topic, pk), pk, `checkpoint snapshot ${id}`));
        checked++;
      }
      // The consumer group of the pipeline got the final offsets (monitoring only).
      const admin = kafka.admin();
      await admin.connect();
      try {
        const [g] = await admin.fetchOffsets({ groupId: defaultGroupId(tablePath, summary.commitUser), topics: [topic] });
        const got = Object.fromEntries(g.partitions.map((p) => [p.partition, Number(p.offset)]));
        if (JSON.stringify(got) !== JSON.stringify(finalOffset[topic])) {
          problems.push(`consumer group offsets ${JSON.stringify(got)}, expected ${JSON.stringify(finalOffset[topic])}`);
        }
      } finally {
        await admin.disconnect();
      }
      await checkInflightCleared(listInflightRecords, io, tablePath, summary.commitUser, problems);
    }
    return {
      ok: done && problems.length === 0,
      trial,
      seed,
      parallelism,
      runs,
      kills,
      checkpointsChecked: checked,
      lost,
      duplicated,
      problems,
    };
  } finally {
    await producer.disconnect().catch(() => undefined);
    await io.close();
    if (!config.keep) await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `trials` Kafka trials (`concurrency` at a time) on one broker and returns the tally. */
export async function runKafkaChaos(options) {
  const { trials, records = 300, checkpointEvery = 50, concurrency = 3, crashRate = 0.85, pk = false, log = () => undefined } = options;
  const { KafkaTestBroker } = await import('../kafka/broker.mjs');
  const broker = options.broker ?? (await KafkaTestBroker.start());
  const seed0 = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const workDir = await mkdtemp(join(tmpdir(), 'tidemark-kafka-chaos-'));
  let run;
  try {
    run = await runTrials({
      trials,
      concurrency,
      seed0,
      runTrial: (trial, seed) =>
        runKafkaTrial({ trial, seed, records, checkpointEvery, crashRate, pk, broker, workDir, keep: options.keep }),
      describe: (r) => `, ${r.checkpointsChecked ?? 0} checkpoints checked`,
      log,
    });
  } finally {
    if (!options.broker) await broker.stop();
    if (!options.keep) await rm(workDir, { recursive: true, force: true });
  }
  const { tally, sum } = run;
  return {
    source: 'kafka (librdkafka mock cluster, 3 brokers, 3 partitions per topic)',
    storage: 'local',
    table: pk ? 'primary-key, deletion vectors, debezium-json' : 'append, json',
    records,
    checkpointEvery,
    ...tally,
    checkpointsChecked: sum('checkpointsChecked'),
  };
}
