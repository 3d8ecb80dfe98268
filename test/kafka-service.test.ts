/**
 * A Kafka pipeline as a service, through the library (`runIngest` with a `KafkaSource`): the
 * Prometheus endpoint's per-partition lag (high watermark − committed offset) is positive while
 * the pipeline has messages to go and falls to 0 after `untilEnd`; a pipeline that follows the
 * topic and is stopped by its signal commits what it read, and the next run resumes exactly.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import {
  IngestMetrics,
  KafkaSource,
  LocalDirCheckpointStore,
  runIngest,
  startMetricsServer,
  type MetricsServer,
  type ReplayableSource,
  type SourceOffset,
  type SourceOpenOptions,
  type SourceRecord,
} from '@tidemark/sink';
import { scrapeMetrics } from './support/cli-service.js';
import { API_KEYS, ERROR_CODES, freshTopic, idValueTable, kafkaAvailable, kafkaSuite, produceIdValues, tableIds } from './support/kafka.js';

const run = kafkaAvailable('Kafka service tests');

function scrape(server: MetricsServer): Promise<Map<string, number>> {
  return scrapeMetrics(`${server.url}/metrics`);
}

/** `source` with `at()` awaited before its `index`-th record (counting from 0) is handed on. */
function pausingAt(source: KafkaSource, index: number, at: () => Promise<void>): ReplayableSource<Record<string, unknown>> {
  return {
    id: source.id,
    bounded: source.bounded,
    backlog: (committed: SourceOffset) => source.backlog(committed),
    committed: (offset, pipeline) => source.committed(offset, pipeline),
    async *open(from: SourceOffset, options?: SourceOpenOptions): AsyncIterable<SourceRecord<Record<string, unknown>>> {
      let n = 0;
      for await (const r of source.open(from, options)) {
        if (n++ === index) await at();
        yield r;
      }
    },
  };
}

// Broker round trips and table commits: generous under a loaded machine (no test asserts time).
describe.skipIf(!run)('a Kafka ingest pipeline as a service', { timeout: 300_000 }, () => {
  const k = kafkaSuite('kafka-service');
  const io = new LocalFileIO();

  const ids = (location: string): Promise<number[]> => tableIds(io, location);
  const produce = (topic: string, from: number, to: number): Promise<void> => produceIdValues(k.producer, topic, from, to);
  /** A fresh 2-partition topic holding ids 0..count-1 and an empty id/value table, both named after `name`. */
  const topicAndTable = async (name: string, count: number): Promise<{ topic: string; location: string }> => {
    const topic = freshTopic(name);
    await k.broker.createTopic(topic, 2);
    await produce(topic, 0, count);
    return { topic, location: await idValueTable(io, join(k.dir, `${name}.db`, 't')) };
  };

  it('the lag gauges show what is left per partition, and fall to 0 after --until-end', async () => {
    const { topic, location } = await topicAndTable('lag', 100);
    const metrics = new IngestMetrics();
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    const source = new KafkaSource({ connection: { brokers: k.broker.brokers }, topics: [topic], untilEnd: true });
    try {
      let midway: Map<string, number> | undefined;
      const summary = await runIngest({
        table: location,
        source: pausingAt(source, 60, async () => void (midway = await scrape(server))),
        stateStore: new LocalDirCheckpointStore(join(k.dir, 'lag-state')),
        checkpointEvery: 20,
        observer: metrics,
      });
      expect(summary.records).toBe(100);
      // Midway (60 read, 60 committed): 40 messages left, end − committed in each partition.
      const gauge = (m: Map<string, number>, name: string, p: number): number =>
        m.get(`tidemark_ingest_${name}{partition="${topic}/${p}"}`) ?? NaN;
      const lag = (m: Map<string, number>, p: number): number => gauge(m, 'source_lag', p);
      expect(lag(midway!, 0) + lag(midway!, 1)).toBe(40);
      for (const p of [0, 1]) {
        expect(gauge(midway!, 'source_end_offset', p)).toBe(50);
        expect(lag(midway!, p)).toBe(50 - gauge(midway!, 'committed_offset', p));
      }
      // After --until-end: everything committed, the lag is 0 in both partitions.
      const after = await scrape(server);
      expect([lag(after, 0), lag(after, 1)]).toEqual([0, 0]);
      expect(after.get(`tidemark_ingest_committed_offset{partition="${topic}/1"}`)).toBe(50);
      expect(after.get('tidemark_ingest_records_total')).toBe(100);
      expect(await ids(location)).toEqual([...Array(100).keys()]);
    } finally {
      await server.close();
      await source.close();
    }
  });

  it('following the topic, a stop by its signal commits what was read; the next run resumes exactly', async () => {
    const { topic, location } = await topicAndTable('stop', 40);
    const state = new LocalDirCheckpointStore(join(k.dir, 'stop-state'));
    const ac = new AbortController();
    const following = new KafkaSource({ connection: { brokers: k.broker.brokers }, topics: [topic] });
    let read = 0;
    const stopAfter25: ReplayableSource<Record<string, unknown>> = {
      id: following.id,
      bounded: false,
      async *open(from, options) {
        for await (const r of following.open(from, options)) {
          yield r;
          if (++read === 25) ac.abort();
        }
      },
    };
    const first = await runIngest({ table: location, source: stopAfter25, stateStore: state, checkpointEvery: 10, signal: ac.signal });
    await following.close();
    expect(first.status).toBe('stopped');
    expect(first.records).toBe(25);
    expect((await ids(location)).length).toBe(25);

    await produce(topic, 40, 60);
    const rest = new KafkaSource({ connection: { brokers: k.broker.brokers }, topics: [topic], untilEnd: true });
    const second = await runIngest({ table: location, source: rest, stateStore: state, checkpointEvery: 10 });
    await rest.close();
    expect(second.records).toBe(35);
    expect(await ids(location)).toEqual([...Array(60).keys()]);
  });

  it('during a stop the last group commit is tried once: a failing coordinator neither delays nor fails the stop', async () => {
    const { topic, location } = await topicAndTable('stop-group', 60);
    const stop = new AbortController();
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m) };
    const kafka = new KafkaSource({ connection: { brokers: k.broker.brokers }, topics: [topic], groupId: 'stop-group', logger });
    let read = 0;
    const stopAt25: ReplayableSource<Record<string, unknown>> = {
      id: kafka.id,
      bounded: false,
      committed: (offset, pipeline) => kafka.committed(offset, pipeline),
      async *open(from, options) {
        for await (const r of kafka.open(from, options)) {
          yield r;
          if (++read === 25) {
            // The coordinator fails the next offset commits: the stop's, after its last checkpoint.
            await k.broker.pushErrors(API_KEYS.OffsetCommit, Array(4).fill(ERROR_CODES.NOT_COORDINATOR!));
            stop.abort();
          }
        }
      },
    };
    let offset: Record<string, number> = {};
    try {
      const summary = await runIngest({
        table: location,
        source: stopAt25,
        stateStore: new LocalDirCheckpointStore(join(k.dir, 'stop-group-state')),
        checkpointEvery: 10,
        signal: stop.signal,
        logger,
      });
      expect(summary).toMatchObject({ status: 'stopped', records: 25 });
      offset = (summary.offset as Record<string, Record<string, number>>)[topic]!;
    } finally {
      await kafka.close();
      await k.broker.clearErrors(API_KEYS.OffsetCommit);
    }
    // One attempt, its failure a warning; no retries while stopping.
    expect(
      warnings.filter((m) => /committing offsets to consumer group stop-group.*retrying/.test(m)),
      warnings.join('\n'),
    ).toEqual([]);
    expect(
      warnings.filter((m) => /reporting the committed position failed/.test(m)),
      warnings.join('\n'),
    ).toHaveLength(1);
    // The stop's checkpoint committed all 25 read: message j of partition p is id 2j + p.
    const before = Object.entries(offset).flatMap(([p, next]) => Array.from({ length: next }, (_, j) => 2 * j + Number(p)));
    expect(before).toHaveLength(25);
    expect(await ids(location)).toEqual(before.sort((a, b) => a - b));
  });
});
