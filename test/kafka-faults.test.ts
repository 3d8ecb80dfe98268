/**
 * Broker faults through the mock cluster's fault injection (test/kafka/mock-k.broker.c): request
 * errors, a broker down and back, leadership moving mid-stream. The source retries and the table
 * ends with every message exactly once; a fault that outlasts the retries stops the pipeline with a
 * clear error, leaves the table at its last checkpoint, and the next run resumes exactly.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { KafkaRequestError, KafkaSource, LocalDirCheckpointStore, runIngest, type IngestOptions } from '@tidemark/sink';
import { API_KEYS, ERROR_CODES, freshTopic, idValueTable, kafkaAvailable, kafkaSuite, produceIdValues, tableIds } from './support/kafka.js';

const run = kafkaAvailable('Kafka broker fault tests');

// Broker round trips and table commits: generous under a loaded machine (no test asserts time).
describe.skipIf(!run)('Kafka source under broker faults', { timeout: 300_000 }, () => {
  const io = new LocalFileIO();

  const k = kafkaSuite('kafka-faults', { brokers: 3 });

  /** A topic of `partitions` partitions led by broker 1, holding messages 0..n-1. */
  async function topicWith(n: number, partitions = 3): Promise<string> {
    const topic = freshTopic('faults');
    await k.broker.createTopic(topic, partitions);
    for (let p = 0; p < partitions; p++) await k.broker.setLeader(topic, p, 1);
    // Small batches, fetched one per partition per request (fetchMaxBytes below): the faults land mid-read.
    await produceIdValues(k.producer, topic, 0, n, { partitions, batch: 6 });
    return topic;
  }

  async function pipeline(name: string): Promise<{ location: string; state: LocalDirCheckpointStore }> {
    const location = await idValueTable(io, join(k.dir, `${name}.db`, 't'));
    return { location, state: new LocalDirCheckpointStore(join(k.dir, `${name}-state`)) };
  }

  const ids = (location: string): Promise<number[]> => tableIds(io, location);

  /** The source's retry warnings, and the records of the checkpoints committed, per ingest. */
  let retries: string[] = [];
  let committedRecords = 0;
  const source = (topic: string, attempts = 8): KafkaSource =>
    new KafkaSource({
      connection: { brokers: k.broker.brokers, retries: attempts, connectionTimeoutMs: 1_000 },
      topics: [topic],
      untilEnd: true,
      fetchMaxBytes: 1,
      logger: { warn: (m) => retries.push(m) },
    });

  /** Ingests `topic` to its end, calling `fault` after the first checkpoint. */
  async function ingest(topic: string, p: { location: string; state: LocalDirCheckpointStore }, fault: () => Promise<void>, attempts = 8) {
    retries = [];
    committedRecords = 0;
    const s = source(topic, attempts);
    let faulted = false;
    const options: IngestOptions = {
      table: p.location,
      source: s,
      stateStore: p.state,
      checkpointEvery: 25,
      onCheckpoint: (info) => {
        committedRecords += info.records;
        if (!faulted) {
          faulted = true;
          void fault();
        }
      },
    };
    try {
      return await runIngest(options);
    } finally {
      await s.close();
    }
  }

  it('retries fetches that fail with leader and timeout errors; nothing lost or duplicated', async () => {
    const topic = await topicWith(150);
    const p = await pipeline('request-errors');
    const summary = await ingest(topic, p, () =>
      k.broker.pushErrors(API_KEYS.Fetch, [
        ERROR_CODES.NOT_LEADER_OR_FOLLOWER!,
        ERROR_CODES.REQUEST_TIMED_OUT!,
        ERROR_CODES.LEADER_NOT_AVAILABLE!,
        ERROR_CODES.NOT_LEADER_OR_FOLLOWER!,
      ]),
    );
    expect(summary.status).toBe('source-done');
    expect(await ids(p.location)).toEqual([...Array(150).keys()]);
    expect(
      retries.some((m) => /^fetching .*: .*retrying in \d+ ms/.test(m)),
      retries.join('\n'),
    ).toBe(true);
  });

  it('rides out the leader broker going down and coming back', async () => {
    const topic = await topicWith(150);
    const p = await pipeline('broker-down');
    const summary = await ingest(topic, p, async () => {
      await k.broker.setDown(1);
      await new Promise((r) => setTimeout(r, 1_500));
      await k.broker.setUp(1);
    });
    expect(summary.status).toBe('source-done');
    expect(await ids(p.location)).toEqual([...Array(150).keys()]);
    expect(retries.length, 'the fetches met the broker down').toBeGreaterThan(0);
  });

  it('follows partition leadership moving to other brokers mid-stream', async () => {
    const topic = await topicWith(150);
    const p = await pipeline('leader-moves');
    const summary = await ingest(topic, p, async () => {
      await k.broker.setLeader(topic, 0, 2);
      await k.broker.setLeader(topic, 1, 3);
      await k.broker.setLeader(topic, 2, 2);
    });
    expect(summary.status).toBe('source-done');
    expect(await ids(p.location)).toEqual([...Array(150).keys()]);
    expect(
      retries.some((m) => /leader/i.test(m)),
      retries.join('\n'),
    ).toBe(true);
  });

  it('a fault that outlasts the retries stops with a clear error; the table keeps its checkpoints and the next run resumes exactly', async () => {
    const topic = await topicWith(150);
    const p = await pipeline('outlasting');
    const err = await ingest(topic, p, () => k.broker.setDown(1), 3).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KafkaRequestError);
    expect((err as Error).message).toMatch(/^fetching .* failed after 3 attempts \(brokers 127\.0\.0\.1:\d+/);
    // The table holds what the committed checkpoints read, once, and nothing after them.
    const before = await ids(p.location);
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBe(committedRecords);
    expect(new Set(before).size).toBe(before.length);
    await k.broker.setUp(1);
    const summary = await ingest(topic, p, async () => undefined);
    expect(summary.restoredFrom).not.toBeNull();
    expect(await ids(p.location)).toEqual([...Array(150).keys()]);
  });
});
