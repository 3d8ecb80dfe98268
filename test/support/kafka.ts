/**
 * Helpers for suites that need the Kafka test broker (test/kafka/mock-broker.c, librdkafka's mock
 * cluster). `npm test` builds it and exports TIDEMARK_KAFKA_BROKER; a plain `npx vitest run` builds
 * it here when librdkafka-dev and gcc are installed. Where it cannot be built the Kafka suites
 * skip with a visible notice, except under CI=true, where they fail.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { buildInitialSchema, openTable } from '@tidemark/core';
import { serializeSchema } from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import { KafkaTestBroker, kafkaBrokerBinary } from '../kafka/broker.mjs';

export { API_KEYS, ERROR_CODES, KafkaTestBroker } from '../kafka/broker.mjs';

const inCI = process.env['CI'] === 'true';
let probed: { binary?: string; reason?: string } | undefined;
const warned = new Set<string>();

/** The broker program, or undefined (with a notice, once per suite) when it cannot be built here. */
export function kafkaBroker(suite: string): string | undefined {
  probed ??= kafkaBrokerBinary((m) => console.log(`[tidemark] ${m}`));
  if (probed.binary !== undefined) return probed.binary;
  if (inCI) return undefined; // the suite runs and fails in startKafka
  if (!warned.has(suite)) {
    warned.add(suite);
    console.warn(
      `[tidemark] SKIPPED ${suite}: the Kafka test broker cannot be built (${probed.reason}). ` +
        'Run `npm test`, which installs librdkafka-dev, kcat and gcc with apt-get. In CI (CI=true) these suites fail instead.',
    );
  }
  return undefined;
}

/** True when the Kafka suite should run (the broker is built, or CI must fail without it). */
export function kafkaAvailable(suite: string): boolean {
  return kafkaBroker(suite) !== undefined || inCI;
}

/** Starts one broker for a suite. */
export async function startKafka(options: { brokers?: number; topics?: Record<string, number> } = {}): Promise<KafkaTestBroker> {
  const binary = kafkaBroker('Kafka');
  if (binary === undefined) throw new Error(`CI=true but the Kafka test broker cannot be built: ${probed?.reason}`);
  return KafkaTestBroker.start({ binary, ...options });
}

/** A topic name no other test of the run uses (the mock cannot delete topics). */
export function freshTopic(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** A connected kafkajs producer (gzip batches stay under the mock's 5 MiB per partition longer). */
export async function producerFor(broker: KafkaTestBroker): Promise<Producer> {
  const kafka = new Kafka({ brokers: broker.brokers, clientId: 'tidemark-test', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  return producer;
}

/** What a Kafka suite shares: its broker, a connected producer and a scratch directory. */
export interface KafkaSuite {
  readonly broker: KafkaTestBroker;
  readonly producer: Producer;
  readonly dir: string;
}

/** Starts a broker, a producer and a scratch dir before the suite's tests, and ends them after. */
export function kafkaSuite(name: string, options: { brokers?: number } = {}): KafkaSuite {
  const suite = {} as { broker: KafkaTestBroker; producer: Producer; dir: string };
  beforeAll(async () => {
    suite.broker = await startKafka(options);
    suite.producer = await producerFor(suite.broker);
    suite.dir = await mkdtemp(join(tmpdir(), `tidemark-${name}-`));
  });
  afterAll(async () => {
    await suite.producer?.disconnect();
    await suite.broker?.stop();
    if (suite.dir) await rm(suite.dir, { recursive: true, force: true });
  });
  return suite;
}

/** Writes schema 0 of a table `id BIGINT NOT NULL, v STRING` (options added to bucket -1, parquet). */
export async function idValueTable(
  io: FileIO,
  location: string,
  spec: { primaryKeys?: string[]; options?: Record<string, string> } = {},
): Promise<string> {
  const schema = buildInitialSchema({
    fields: [
      { name: 'id', type: 'BIGINT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    ...(spec.primaryKeys ? { primaryKeys: spec.primaryKeys } : {}),
    options: { bucket: '-1', 'file.format': 'parquet', ...spec.options },
  });
  await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
  return location;
}

/** The ids a table holds, sorted (duplicates kept: the exactly-once checks count them); none before its first commit. */
export async function tableIds(io: FileIO, location: string): Promise<number[]> {
  const t = await openTable(location, { fileIO: io });
  if ((await t.snapshotManager.latestId()) === null) return [];
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}

/**
 * Produces `{"id": i, "v": "v<i>"}` for i in [from, to), message i to partition i mod `partitions`
 * (default 2): in one send, or in sends of `batch` messages.
 */
export async function produceIdValues(
  producer: Producer,
  topic: string,
  from: number,
  to: number,
  options: { partitions?: number; batch?: number } = {},
): Promise<void> {
  const partitions = options.partitions ?? 2;
  const send = async (lo: number, hi: number): Promise<void> => {
    const messages = [];
    for (let i = lo; i < hi; i++) messages.push({ partition: i % partitions, value: JSON.stringify({ id: i, v: `v${i}` }) });
    await producer.send({ topic, messages });
  };
  if (options.batch === undefined) return send(from, to);
  for (let b = from; b < to; b += options.batch) await send(b, Math.min(to, b + options.batch));
}
