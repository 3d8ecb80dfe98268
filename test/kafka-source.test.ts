/**
 * `KafkaSource` against the Kafka test broker (librdkafka's mock cluster, test/kafka/): reads by
 * explicit assignment into tables through `runIngest`, resumes exactly from the checkpoint's
 * offsets, commits them to a consumer group for monitoring, honours the first-run start positions,
 * stops on an offset retention deleted (naming topic, partition and range), decodes the formats
 * with keys and tombstones, and ends promptly when its signal aborts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { openTable } from '@tidemark/core';
import { LocalFileIO } from '@tidemark/storage';
import {
  CDC_ROW_KIND_FIELD,
  KafkaOffsetOutOfRangeError,
  KafkaSource,
  LocalDirCheckpointStore,
  OFFSETS_PROPERTY,
  defaultGroupId,
  decodeSinkJson,
  runIngest,
  type KafkaSourceOptions,
  type SourceOffset,
} from '@tidemark/sink';
import { freshTopic, idValueTable, kafkaAvailable, kafkaSuite, produceIdValues } from './support/kafka.js';

const run = kafkaAvailable('Kafka source tests');

// Broker round trips and table commits: generous under a loaded machine (no test asserts time).
describe.skipIf(!run)('KafkaSource on the test broker', { timeout: 300_000 }, () => {
  const io = new LocalFileIO();

  const k = kafkaSuite('kafka-source');

  const source = (topic: string, extra: Partial<KafkaSourceOptions> = {}): KafkaSource =>
    new KafkaSource({ connection: { brokers: k.broker.brokers }, topics: [topic], untilEnd: true, ...extra });

  const table = (name: string, pk = false): Promise<string> =>
    idValueTable(
      io,
      join(k.dir, `${name}.db`, 't'),
      pk ? { primaryKeys: ['id'], options: { bucket: '2', 'deletion-vectors.enabled': 'true' } } : {},
    );

  async function rowsOf(location: string): Promise<Array<{ id: number; v: string }>> {
    const t = await openTable(location, { fileIO: io });
    if ((await t.snapshotManager.latestId()) === null) return [];
    return (await t.newRead().toArrowTable())
      .toArray()
      .map((r) => ({ id: Number(r.id), v: String(r.v) }))
      .sort((a, b) => a.id - b.id);
  }

  const produce = (topic: string, from: number, to: number, partitions = 3): Promise<void> =>
    produceIdValues(k.producer, topic, from, to, { partitions });

  it('lands every message of every partition once, resumes from the offsets, and reports them to the group', async () => {
    const topic = freshTopic('orders');
    await k.broker.createTopic(topic, 3);
    await produce(topic, 0, 300);
    const location = await table('basic');
    const state = new LocalDirCheckpointStore(join(k.dir, 'basic-state'));
    const s1 = source(topic);
    const first = await runIngest({ table: location, source: s1, stateStore: state, checkpointEvery: 70 });
    expect(first.status).toBe('source-done');
    expect(first.records).toBe(300);
    expect(first.offset).toEqual({ [topic]: { 0: 100, 1: 100, 2: 100 } });
    expect((await rowsOf(location)).map((r) => r.id)).toEqual([...Array(300).keys()]);
    // The snapshot carries the offsets, as the file source's byte offset.
    const snap = await (await openTable(location, { fileIO: io })).snapshotManager.latest();
    const prop = decodeSinkJson(snap!.properties![OFFSETS_PROPERTY]!, 'offsets') as { source: string; offset: SourceOffset };
    expect(prop).toMatchObject({ source: s1.id, offset: { [topic]: { 0: 100, 1: 100, 2: 100 } } });

    // The default group (table + commit user) has the committed offsets: lag tools see the pipeline.
    const admin = new Kafka({ brokers: k.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const group = await admin.fetchOffsets({ groupId: defaultGroupId(location, first.commitUser), topics: [topic] });
      expect(group[0]!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
        [0, '100'],
        [1, '100'],
        [2, '100'],
      ]);
    } finally {
      await admin.disconnect();
    }
    await s1.close();

    await produce(topic, 300, 420);
    const s2 = source(topic);
    const second = await runIngest({ table: location, source: s2, stateStore: state, checkpointEvery: 70 });
    await s2.close();
    expect(second.restoredFrom).not.toBeNull();
    expect(second.records).toBe(120);
    expect((await rowsOf(location)).map((r) => r.id)).toEqual([...Array(420).keys()]);
    await state.close();
  });

  // (The mock answers ListOffsets by timestamp with -1: the timestamp start is tested on the in-memory client.)
  it('starts a first run at latest or at a consumer group offset', async () => {
    const topic = freshTopic('starts');
    await k.broker.createTopic(topic, 3);
    await produce(topic, 0, 60);

    const read = async (extra: Partial<KafkaSourceOptions>): Promise<number[]> => {
      const s = source(topic, extra);
      const ids: number[] = [];
      try {
        for await (const r of s.open(null)) ids.push(r.value['id'] as number);
      } finally {
        await s.close();
      }
      return ids.sort((a, b) => a - b);
    };
    expect(await read({ start: 'latest' })).toEqual([]);
    // A group that committed offsets 5 in every partition: the first run starts there.
    const groupId = freshTopic('group');
    const committer = source(topic, { groupId });
    await committer.committed({ [topic]: { 0: 5, 1: 5, 2: 5 } }, { table: 'x', commitUser: 'y' });
    await committer.close();
    expect(await read({ start: 'group', groupId })).toEqual([...Array(60).keys()].filter((i) => Math.floor(i / 3) >= 5));
    // A stored offset wins over the start position: the group is never trusted on restore.
    const s = source(topic, { start: 'latest' });
    const ids: number[] = [];
    for await (const r of s.open({ [topic]: { 0: 18, 1: 18, 2: 18 } })) ids.push(r.value['id'] as number);
    await s.close();
    expect(ids.sort((a, b) => a - b)).toEqual([54, 55, 56, 57, 58, 59]);
  });

  it('refuses an offset that retention deleted, naming topic, partition and the available range', async () => {
    const topic = freshTopic('retention');
    await k.broker.createTopic(topic, 1);
    // The mock keeps at most 5 MiB per partition: 7 MiB of uncompressed messages push the low watermark up.
    const payload = 'x'.repeat(1024);
    for (let b = 0; b < 7; b++) {
      await k.producer.send({
        topic,
        messages: Array.from({ length: 1024 }, (_, i) => ({ value: JSON.stringify({ id: b * 1024 + i, v: payload }) })),
      });
    }
    const s = source(topic);
    const drain = async (): Promise<void> => {
      for await (const r of s.open({ [topic]: { 0: 0 } })) void r;
    };
    const err = await drain().then(
      () => undefined,
      (e: unknown) => e,
    );
    await s.close();
    expect(err).toBeInstanceOf(KafkaOffsetOutOfRangeError);
    const e = err as KafkaOffsetOutOfRangeError;
    expect(e.low).toBeGreaterThan(0);
    expect(e.high).toBe(7 * 1024);
    expect(e.message).toContain(`Kafka topic ${topic} partition 0: offset 0 is out of range`);
    expect(e.message).toContain(`offsets ${e.low} to ${e.high}`);
    // An offset past the end (a recreated topic) is refused the same way.
    const s2 = source(topic);
    await expect(
      (async () => {
        for await (const r of s2.open({ [topic]: { 0: 9_000 } })) void r;
      })(),
    ).rejects.toThrow(/offset 9000 is out of range/);
    await s2.close();
  });

  it('json on a primary-key table: messages are upserts, a tombstone deletes its key', async () => {
    const topic = freshTopic('upserts');
    await k.broker.createTopic(topic, 2);
    const key = (id: number): string => JSON.stringify({ id });
    await k.producer.send({
      topic,
      messages: [
        { key: key(1), value: JSON.stringify({ id: 1, v: 'a' }), partition: 0 },
        { key: key(2), value: JSON.stringify({ id: 2, v: 'b' }), partition: 1 },
        { key: key(1), value: JSON.stringify({ id: 1, v: 'a2' }), partition: 0 },
        { key: key(3), value: JSON.stringify({ id: 3, v: 'c' }), partition: 1 },
        { key: key(2), value: null, partition: 1 },
      ],
    });
    const location = await table('upsert', true);
    await runIngest({
      table: location,
      source: source(topic, { primaryKeys: ['id'] }),
      commitUser: 'upserts',
      rowKindField: CDC_ROW_KIND_FIELD,
    });
    expect(await rowsOf(location)).toEqual([
      { id: 1, v: 'a2' },
      { id: 3, v: 'c' },
    ]);
  });

  it('debezium-json: updates and deletes, a delete without before image by its message key, tombstones skipped', async () => {
    const topic = freshTopic('dbz');
    await k.broker.createTopic(topic, 1);
    const ev = (op: string, before: object | null, after: object | null): string =>
      JSON.stringify({ schema: {}, payload: { op, before, after, source: { table: 't' } } });
    const key = (id: number): string => JSON.stringify({ schema: {}, payload: { id } });
    await k.producer.send({
      topic,
      messages: [
        { key: key(1), value: ev('c', null, { id: 1, v: 'a' }) },
        { key: key(2), value: ev('r', null, { id: 2, v: 'b' }) },
        { key: key(1), value: ev('u', { id: 1, v: 'a' }, { id: 1, v: 'a2' }) },
        { key: key(2), value: ev('d', null, null) },
        { key: key(2), value: null },
        { key: key(3), value: ev('c', null, { id: 3, v: 'c' }) },
      ],
    });
    const location = await table('dbz', true);
    const s = source(topic, { format: 'debezium-json', primaryKeys: ['id'] });
    // Records of one message carry { offset, skip } until its last: a checkpoint between -U and +U resumes at +U.
    const offsets: SourceOffset[] = [];
    for await (const r of s.open(null)) offsets.push(r.offset);
    expect(offsets[2]).toEqual({ [topic]: { 0: { offset: 2, skip: 1 } } });
    expect(offsets[3]).toEqual({ [topic]: { 0: 3 } });
    const resumed: unknown[] = [];
    for await (const r of s.open(offsets[2]!)) resumed.push(r.value);
    expect(resumed[0]).toEqual({ id: 1, v: 'a2', [CDC_ROW_KIND_FIELD]: '+U' });
    await s.close();

    await runIngest({ table: location, source: s, commitUser: 'dbz', rowKindField: CDC_ROW_KIND_FIELD, checkpointEvery: 3 });
    await s.close();
    expect(await rowsOf(location)).toEqual([
      { id: 1, v: 'a2' },
      { id: 3, v: 'c' },
    ]);
  });

  it('follows the topic until its signal aborts, then ends promptly; backlog gives each partition`s lag', async () => {
    const topic = freshTopic('follow');
    await k.broker.createTopic(topic, 2);
    await produce(topic, 0, 10, 2);
    const s = source(topic, { untilEnd: false });
    expect(s.bounded).toBe(false);
    const ac = new AbortController();
    const seen: number[] = [];
    let last: SourceOffset = null;
    const reading = (async () => {
      for await (const r of s.open(null, { signal: ac.signal })) {
        seen.push(r.value['id'] as number);
        last = r.offset;
        if (seen.length === 10) void produce(topic, 10, 16, 2);
        if (seen.length === 16) ac.abort();
      }
    })();
    await reading;
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(16).keys()]);
    expect(last).toEqual({ [topic]: { 0: 8, 1: 8 } });
    const backlog = await s.backlog({ [topic]: { 0: 5, 1: 8 } });
    expect([...backlog].sort((a, b) => a.partition.localeCompare(b.partition))).toEqual([
      { partition: `${topic}/0`, end: 8, committed: 5 },
      { partition: `${topic}/1`, end: 8, committed: 8 },
    ]);
    await s.close();
  });
});
