/**
 * Scale-out from Kafka: several `tidemark ingest` processes (the built CLI) share one topic by
 * partition (`--split i/N`), each its own pipeline (state, commit user), all committing to one table
 * through the CAS commit. Two processes, then a restart with a changed split (refused: its state
 * belongs to another assignment), then the documented way to change N: stop the old processes,
 * start the new ones with fresh states at the shared consumer group's offsets (`--start group`).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { LocalFileIO } from '@tidemark/storage';
import { KAFKA_CLI_BUILD, packagesBuilt } from './support/built.js';
import { runTidemark, type ProcessResult } from './support/cli-process.js';
import { freshTopic, idValueTable, kafkaAvailable, kafkaSuite, produceIdValues, tableIds } from './support/kafka.js';

const built = packagesBuilt('Kafka scale-out tests', ...KAFKA_CLI_BUILD);
const run = built && kafkaAvailable('Kafka scale-out tests');

describe.skipIf(!run)('several ingest processes splitting one topic into one table', () => {
  const io = new LocalFileIO();

  const k = kafkaSuite('kafka-scale');

  const produce = (topic: string, from: number, to: number): Promise<void> =>
    produceIdValues(k.producer, topic, from, to, { partitions: 8, batch: 25 });
  const ids = (location: string): Promise<number[]> => tableIds(io, location);

  const ingest = (location: string, topic: string, split: string, state: string, extra: string[] = []): Promise<ProcessResult> =>
    runTidemark(
      [
        'ingest',
        location,
        '--source',
        `kafka://${k.broker.bootstrap}/${topic}`,
        '--state',
        state,
        '--split',
        split,
        '--until-end',
        '--checkpoint-every',
        '20',
        ...extra,
      ],
      { timeoutMs: 300_000 },
    );

  function ok(r: ProcessResult): { records: number; commitUser: string; offset: Record<string, Record<string, number>> } {
    expect(r.timedOut).toBe(false);
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      records: number;
      commitUser: string;
      offset: Record<string, Record<string, number>>;
    };
  }

  it('two, then four processes land every message once; a restart with a changed split is refused', async () => {
    const topic = freshTopic('scale');
    await k.broker.createTopic(topic, 8);
    const location = await idValueTable(io, join(k.dir, 'db.db', 't'));
    const group = ['--group-id', `g-${topic}`];
    await produce(topic, 0, 240);

    // Two processes at once, each its own state: partitions 0,2,4,6 and 1,3,5,7.
    const two = await Promise.all([0, 1].map((i) => ingest(location, topic, `${i}/2`, join(k.dir, `state-2-${i}`), group)));
    const [a, b] = two.map(ok);
    expect(a!.records + b!.records).toBe(240);
    expect(Object.keys(a!.offset[topic]!)).toEqual(['0', '2', '4', '6']);
    expect(a!.commitUser).not.toBe(b!.commitUser);
    expect(await ids(location)).toEqual([...Array(240).keys()]);

    // The same state with another split: refused, the table untouched.
    await produce(topic, 240, 400);
    const changed = await ingest(location, topic, '0/4', join(k.dir, 'state-2-0'), group);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain(`belongs to source kafka:json:${topic}#split=0/2, not kafka:json:${topic}#split=0/4`);
    expect(await ids(location)).toEqual([...Array(240).keys()]);

    // Rescaling as documented: the old processes stopped (done above), four new pipelines with
    // fresh states start at the group's offsets, which the two old ones committed after each checkpoint.
    const four = (
      await Promise.all(
        [0, 1, 2, 3].map((i) => ingest(location, topic, `${i}/4`, join(k.dir, `state-4-${i}`), [...group, '--start', 'group'])),
      )
    ).map(ok);
    expect(four.reduce((n, s) => n + s.records, 0)).toBe(160);
    expect(new Set(four.map((s) => s.commitUser)).size).toBe(4);
    expect(await ids(location)).toEqual([...Array(400).keys()]);
  }, 600_000);

  it('two processes upsert into one primary-key table with deletion vectors: every key holds its last version', async () => {
    const topic = freshTopic('scale-pk');
    await k.broker.createTopic(topic, 4);
    const location = await idValueTable(io, join(k.dir, 'db.db', 'pk'), {
      primaryKeys: ['id'],
      options: { bucket: '2', 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '2' },
    });
    // 60 keys, 5 versions each; a key's messages stay in partition id mod 4, so the two processes never share a key.
    const last = new Map<number, string>();
    for (let round = 0; round < 5; round++) {
      const messages = [];
      for (let id = 0; id < 60; id++) {
        const v = `r${round}-${id}`;
        last.set(id, v);
        messages.push({ partition: id % 4, key: JSON.stringify({ id }), value: JSON.stringify({ id, v }) });
      }
      await k.producer.send({ topic, messages });
    }
    const results = await Promise.all([0, 1].map((i) => ingest(location, topic, `${i}/2`, join(k.dir, `state-pk-${i}`))));
    const summaries = results.map(ok);
    expect(summaries.reduce((n, s) => n + s.records, 0)).toBe(300);
    const rows = (await (await openTable(location, { fileIO: io })).newRead().toArrowTable())
      .toArray()
      .map((r) => [Number(r.id), String(r.v)] as const)
      .sort((a, b) => a[0] - b[0]);
    expect(rows).toEqual([...last].sort((a, b) => a[0] - b[0]));
  }, 600_000);
});
