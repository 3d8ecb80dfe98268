/**
 * `tidemark ingest --source kafka://...` as a user runs it (the built binary): the summary line,
 * usage errors naming the option, a missing topic, an offset retention deleted, and secrets that
 * never reach the output.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { KAFKA_CLI_BUILD, packagesBuilt } from './support/built.js';
import { runTidemark } from './support/cli-process.js';
import { ERROR_CODES, freshTopic, kafkaAvailable, kafkaSuite, produceIdValues } from './support/kafka.js';

const built = packagesBuilt('Kafka CLI tests', ...KAFKA_CLI_BUILD);
const run = built && kafkaAvailable('Kafka CLI tests');

describe.skipIf(!run)('tidemark ingest --source kafka://', () => {
  let table: string;
  let pkTable: string;

  const k = kafkaSuite('kafka-cli', { brokers: 1 });
  beforeAll(async () => {
    table = join(k.dir, 'db.db', 'events');
    pkTable = join(k.dir, 'db.db', 'items');
    const columns = JSON.stringify([
      { name: 'id', type: 'BIGINT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ]);
    expect((await runTidemark(['create', table, '--schema', columns])).code).toBe(0);
    expect((await runTidemark(['create', pkTable, '--schema', columns, '--primary-key', 'id', '--option', 'bucket=2'])).code).toBe(0);
  });

  const uri = (topic: string): string => `kafka://${k.broker.bootstrap}/${topic}`;

  it('reads a topic to its end and prints the summary with the offsets; a rerun reads nothing twice', async () => {
    const topic = freshTopic('cli');
    await k.broker.createTopic(topic, 2);
    await produceIdValues(k.producer, topic, 0, 30);
    const args = [
      'ingest',
      table,
      '--source',
      uri(topic),
      '--state',
      join(k.dir, `state-${topic}`),
      '--until-end',
      '--checkpoint-every',
      '10',
    ];
    const first = await runTidemark(args, { timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout.trim().split('\n').pop()!) as { status: string; records: number; offset: unknown };
    expect(summary).toMatchObject({ status: 'source-done', records: 30, offset: { [topic]: { 0: 15, 1: 15 } } });
    const again = await runTidemark(args, { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout.trim().split('\n').pop()!)).toMatchObject({ records: 0 });
    const count = await runTidemark(['count', table]);
    expect(count.stdout.trim()).toBe('30');
  }, 240_000);

  it('an offset retention deleted stops the next run with exit 1, naming topic, partition and range; the table stays', async () => {
    const retained = join(k.dir, 'db.db', 'retained');
    const columns = JSON.stringify([
      { name: 'id', type: 'BIGINT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ]);
    expect((await runTidemark(['create', retained, '--schema', columns])).code).toBe(0);
    const topic = freshTopic('retention');
    await k.broker.createTopic(topic, 1);
    // Batches of over 1 MiB (1,024 messages of 1 KiB): the mock keeps 5 MiB per partition, so the
    // last batches push the low watermark past what the first run read.
    const payload = 'x'.repeat(1024);
    const batch = (b: number) =>
      k.producer.send({
        topic,
        messages: Array.from({ length: 1024 }, (_, i) => ({ value: JSON.stringify({ id: b * 1024 + i, v: payload }) })),
      });
    await batch(0);
    const args = ['ingest', retained, '--source', uri(topic), '--state', join(k.dir, 'state-retention'), '--until-end'];
    const first = await runTidemark(args, { timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout.trim().split('\n').pop()!)).toMatchObject({ records: 1024, offset: { [topic]: { 0: 1024 } } });
    for (let b = 1; b < 7; b++) await batch(b);
    // The range the partition holds now, as the broker reports it.
    const admin = new Kafka({ brokers: k.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const [held] = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
    expect(Number(held!.low)).toBeGreaterThan(1024);
    const again = await runTidemark(args, { timeoutMs: 120_000 });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `tidemark ingest: Kafka topic ${topic} partition 0: offset 1024 is out of range (the partition holds offsets ${held!.low} to ${held!.high})`,
    );
    expect(held!.high).toBe(String(7 * 1024));
    // Nothing skipped: the table keeps what the first run committed.
    expect((await runTidemark(['count', retained])).stdout.trim()).toBe('1024');
  }, 240_000);

  it('refuses options that do not fit, naming them', async () => {
    const file = join(k.dir, 'in.jsonl');
    await writeFile(file, '{"id":1,"v":"a"}\n');
    const state = ['--state', join(k.dir, 'state-usage')];
    const cases: Array<[string[], RegExp]> = [
      [['--source', file, '--until-end'], /option '--until-end' applies to kafka:\/\/ sources only/],
      [['--source', 'kafka://broker/orders'], /broker 'broker' is not host:port/],
      [['--source', 'kafka://u:secret@h:9092/orders'], /put no credentials in the URI/],
      [['--source', uri('t'), '--partitions', '0', '--split', '0/2'], /either '--partitions' or '--split'/],
      [['--source', uri('t'), '--split', '2/2'], /--split '2\/2' must be i\/N/],
      [['--source', uri('t'), '--start', 'group'], /'--start group' needs '--group-id'/],
      [['--source', uri('t'), '--start', 'yesterday'], /option 'start' needs an ISO-8601 time/],
      [['--source', uri('t'), '--format', 'canal-json'], /--format canal-json needs a primary-key table/],
      [['--source', uri('t'), '--kafka-user', 'u'], /without a SASL mechanism/],
    ];
    const results = await Promise.all(cases.map(([extra]) => runTidemark(['ingest', table, ...state, ...extra], { timeoutMs: 300_000 })));
    cases.forEach(([extra, message], i) => {
      const r = results[i]!;
      expect(r.code, `${extra.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('secret');
    });
  }, 600_000);

  it('a missing topic is a one-line error naming it', async () => {
    // The mock creates any topic a client asks about (as a Kafka broker answering Metadata v0-3
    // with auto.create.topics.enable does); this one answers UNKNOWN_TOPIC_OR_PARTITION, as Kafka does for v4+.
    await k.broker.setTopicError('no-such-topic', ERROR_CODES.UNKNOWN_TOPIC_OR_PARTITION!);
    const r = await runTidemark(
      ['ingest', table, '--source', uri('no-such-topic'), '--state', join(k.dir, 'state-missing'), '--until-end'],
      {
        timeoutMs: 120_000,
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Kafka topic no-such-topic does not exist');
  }, 240_000);

  it('never prints the SASL password (the test broker has no SASL: the connection fails)', async () => {
    const secret = 'pa55-Very-Secret';
    const r = await runTidemark(
      [
        'ingest',
        pkTable,
        '--source',
        uri('whatever'),
        '--state',
        join(k.dir, 'state-sasl'),
        '--until-end',
        '--kafka-sasl',
        'scram-sha-256',
        '--kafka-user',
        'svc',
      ],
      { env: { TIDEMARK_KAFKA_PASSWORD: secret, TIDEMARK_DEBUG: '1' }, timeoutMs: 120_000 },
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr.length).toBeGreaterThan(0);
    expect(r.stdout + r.stderr).not.toContain(secret);
  }, 240_000);
});
