/**
 * `KafkaSource` on an in-memory Kafka client: what the test broker cannot do (partitions added to
 * a topic, offsets by timestamp) and the offset/assignment rules. The broker suites are in
 * test/kafka-*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  KafkaSettingsError,
  KafkaSource,
  parsePartitionList,
  parseSplit,
  runIngest,
  type KafkaSourceOptions,
  type SourceOffset,
} from '../src/index.js';
import { memoryTable, tableIds } from './helpers.js';
import { kafka, type MemoryKafka } from './memory-kafka.js';

function source(k: MemoryKafka, options: Partial<KafkaSourceOptions> = {}): KafkaSource {
  return new KafkaSource({
    connection: { brokers: ['memory:1'] },
    topics: [...k.topics.keys()],
    untilEnd: true,
    clientFactory: () => k,
    ...options,
  });
}

async function values(s: KafkaSource, from: SourceOffset = null, signal?: AbortSignal): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const r of s.open(from, signal ? { signal } : {})) out.push(r.value);
  return out;
}

describe('KafkaSource (in-memory client)', () => {
  it('picks up partitions added while it follows the topic, from their earliest offset', async () => {
    const k = kafka({ orders: 2 });
    for (let i = 0; i < 4; i++) k.add('orders', i % 2, JSON.stringify({ id: i }));
    const s = source(k, { untilEnd: false, partitionDiscoveryMs: 1 });
    const ac = new AbortController();
    const seen: number[] = [];
    let last: SourceOffset = null;
    for await (const r of s.open(null, { signal: ac.signal })) {
      seen.push(r.value['id'] as number);
      last = r.offset;
      if (seen.length === 4) {
        // The topic grows a third partition that already holds two messages.
        k.topics.get('orders')!.push([]);
        k.add('orders', 2, JSON.stringify({ id: 100 }));
        k.add('orders', 2, JSON.stringify({ id: 101 }));
      }
      if (seen.length === 6) ac.abort();
    }
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 100, 101]);
    expect(last).toEqual({ orders: { 0: 2, 1: 2, 2: 2 } });
    // A restore from a checkpoint taken before the partition existed reads it from its earliest offset.
    expect((await values(source(k), { orders: { 0: 2, 1: 2 } })).map((v) => v['id'])).toEqual([100, 101]);
  });

  it('starts a first run at the first message at or after a timestamp', async () => {
    const k = kafka({ t: 2 });
    for (let i = 0; i < 10; i++) k.add('t', i % 2, JSON.stringify({ id: i }), 1_000 + i);
    const ids = (await values(source(k, { start: { timestampMs: 1_006 } }))).map((v) => v['id']);
    expect(ids.sort()).toEqual([6, 7, 8, 9]);
  });

  it('splits partitions over processes: --split i/N and --partitions; the id names the assignment', async () => {
    const k = kafka({ t: 4 });
    for (let i = 0; i < 8; i++) k.add('t', i % 4, JSON.stringify({ id: i }));
    const a = source(k, { assignment: parseSplit('0/2') });
    const b = source(k, { assignment: parseSplit('1/2') });
    expect((await values(a)).map((v) => v['id'])).toEqual(expect.arrayContaining([0, 2, 4, 6]));
    expect((await values(b)).map((v) => v['id']).sort()).toEqual([1, 3, 5, 7]);
    expect(a.id).toBe('kafka:json:t#split=0/2');
    expect(source(k, { assignment: parsePartitionList('3,1') }).id).toBe('kafka:json:t#partitions=1,3');
    expect((await values(source(k, { assignment: parsePartitionList('3') }))).map((v) => v['id'])).toEqual([3, 7]);
    await expect(values(source(k, { assignment: parsePartitionList('9') }))).rejects.toThrow(/topic t has no partition 9/);
    expect(() => parseSplit('2/2')).toThrow(KafkaSettingsError);
    expect(() => parsePartitionList('1,x')).toThrow(/--partitions '1,x'/);
    // A checkpoint that holds a partition this assignment does not own is refused.
    await expect(values(a, { t: { 0: 2, 1: 2 } })).rejects.toThrow(/partition t\/1, which is not assigned/);
  });

  it('a split pipeline commits its share into one table; the offsets report to the group after each commit', async () => {
    const k = kafka({ t: 4 });
    for (let i = 0; i < 40; i++) k.add('t', i % 4, JSON.stringify({ id: i, v: `v${i}` }));
    const { io, location } = await memoryTable();
    for (const split of ['0/2', '1/2']) {
      const s = source(k, { assignment: parseSplit(split), groupId: 'g' });
      await runIngest({ table: location, fileIO: io, source: s, commitUser: `p${split.replace('/', 'of')}`, checkpointEvery: 7 });
    }
    expect(await tableIds(io, location)).toEqual([...Array(40).keys()]);
    const last = k.commits.at(-1)!.map((c) => [c.partition, c.offset]);
    expect(last.sort()).toEqual([
      [1, 10],
      [3, 10],
    ]);
  });

  it('refuses a message that is not a JSON object, naming topic, partition and offset', async () => {
    const k = kafka({ t: 1 });
    k.add('t', 0, JSON.stringify({ id: 1 }));
    k.add('t', 0, '[1,2]');
    await expect(values(source(k))).rejects.toThrow('kafka t/0 offset 1: the message value must be a JSON object');
    expect(() => source(k, { format: 'canal-json' })).toThrow(/needs a primary-key table/);
    expect(() => source(k, { start: 'group' })).toThrow(/--group-id/);
  });

  it('a quiet topic still gets what was read committed once the checkpoint interval passed', async () => {
    const k = kafka({ t: 2 });
    for (let i = 0; i < 3; i++) k.add('t', i % 2, JSON.stringify({ id: i, v: `v${i}` }));
    const { io, location } = await memoryTable();
    const ac = new AbortController();
    let byTimer = false;
    const backstop = setTimeout(() => ac.abort(), 30_000);
    // Records that arrive after the interval commit at once; the last ones only by the timer.
    let committed = 0;
    let last: SourceOffset = null;
    const summary = await runIngest({
      table: location,
      fileIO: io,
      source: source(k, { untilEnd: false }),
      commitUser: 'idle',
      checkpointEvery: 1_000,
      checkpointIntervalMs: 1_000,
      signal: ac.signal,
      onCheckpoint: (info) => {
        committed += info.records;
        last = info.offset;
        if (committed === 3 && !ac.signal.aborted) {
          byTimer = true;
          ac.abort();
        }
      },
    });
    clearTimeout(backstop);
    expect(byTimer).toBe(true);
    expect(last).toEqual({ t: { 0: 2, 1: 1 } });
    expect(summary.status).toBe('stopped');
    expect(await tableIds(io, location)).toEqual([0, 1, 2]);
  });

  it('messages that make no rows at the end of a partition still move the committed offset', async () => {
    const k = kafka({ t: 2 });
    k.add('t', 0, JSON.stringify({ id: 1, v: 'a' }));
    k.add('t', 0, null); // a tombstone: skipped on an append table
    k.add('t', 1, null);
    const { io, location } = await memoryTable();
    const commits: SourceOffset[] = [];
    const summary = await runIngest({
      table: location,
      fileIO: io,
      source: source(k, { groupId: 'g' }),
      commitUser: 'tail',
      onCheckpoint: (info) => commits.push(info.offset),
    });
    expect(summary.records).toBe(1);
    expect(summary.offset).toEqual({ t: { 0: 2, 1: 1 } });
    expect(commits.at(-1)).toEqual({ t: { 0: 2, 1: 1 } });
    expect(
      k.commits
        .at(-1)!
        .map((c) => [c.partition, c.offset])
        .sort(),
    ).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(await tableIds(io, location)).toEqual([1]);
  });

  it('ends without reading when the signal is aborted before open', async () => {
    const k = kafka({ t: 1 });
    k.add('t', 0, JSON.stringify({ id: 1 }));
    const ac = new AbortController();
    ac.abort();
    expect(await values(source(k, { untilEnd: false }), null, ac.signal)).toEqual([]);
  });
});
