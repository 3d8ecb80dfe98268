/**
 * Exactly-once from Kafka under SIGKILL: test/chaos/kafka-harness.mjs runs `tidemark ingest
 * --source kafka://... --until-end` (from the built dist: run `npx turbo run build` first) while a
 * producer keeps producing into the topic, kills it at random moments and at every named crash
 * point of the sink, and restarts it until it has read everything. An append table fed by `json`
 * must hold every message once; a primary-key table with deletion vectors fed by `debezium-json`
 * must equal the simulated source database's final state; and at every checkpoint a run
 * completed, a batch read of that checkpoint's snapshot must hold exactly the messages before its
 * stored offsets (so deletion-vector rows are visible right after each checkpoint's commit).
 *
 * Trial counts: each trial's first run crashes at point `trial % points`, so these counts reach
 * every point (append tables never reach `before-compact-snapshot`); `npm run chaos -- --kafka
 * [--pk] --trials 200` runs the soak (figures in benchmarks/results/chaos-kafka.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_POINTS } from '@tidemark/sink';
import { KAFKA_CLI_BUILD, packagesBuilt } from './support/built.js';
import { chaosHarness, expectExactlyOnce, type ChaosTally } from './support/chaos.js';
import { kafkaAvailable, startKafka, type KafkaTestBroker } from './support/kafka.js';

interface Tally extends ChaosTally {
  checkpointsChecked: number;
}
interface KafkaHarness {
  runKafkaChaos(options: {
    trials: number;
    records: number;
    checkpointEvery: number;
    concurrency: number;
    pk?: boolean;
    broker?: KafkaTestBroker;
    log?: (m: string) => void;
  }): Promise<Tally>;
}

const built = packagesBuilt('Kafka chaos tests', ...KAFKA_CLI_BUILD);
const run = built && kafkaAvailable('Kafka chaos tests');

const APPEND_POINTS = CRASH_POINTS.filter((p) => p !== 'before-compact-snapshot');

function check(tally: Tally, trials: number, points: readonly string[]): void {
  expectExactlyOnce(tally, trials);
  // The runs really crashed, at every named point, and completed checkpoints were checked.
  expect(tally.runs).toBeGreaterThan(trials);
  for (const point of points) expect(tally.kills[point] ?? 0, `kills at ${point}`).toBeGreaterThan(0);
  expect(tally.checkpointsChecked).toBeGreaterThanOrEqual(trials);
}

describe.skipIf(!run).concurrent('exactly-once ingest from Kafka under SIGKILL', () => {
  let broker: KafkaTestBroker;
  beforeAll(async () => {
    broker = await startKafka();
  });
  afterAll(async () => {
    await broker?.stop();
  });
  const harness = (): Promise<KafkaHarness> => chaosHarness<KafkaHarness>('kafka-harness.mjs');

  it(`${APPEND_POINTS.length} append trials (json) while a producer produces: every message once`, async () => {
    const trials = APPEND_POINTS.length;
    const tally = await (await harness()).runKafkaChaos({ trials, records: 200, checkpointEvery: 40, concurrency: 2, broker });
    console.log(`[chaos kafka append] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
    check(tally, trials, APPEND_POINTS);
  }, 900_000);

  it(`${CRASH_POINTS.length} primary-key DV trials (debezium-json): the table equals the source database, every checkpoint readable`, async () => {
    const trials = CRASH_POINTS.length;
    const tally = await (await harness()).runKafkaChaos({ trials, records: 200, checkpointEvery: 40, concurrency: 2, pk: true, broker });
    console.log(`[chaos kafka pk] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
    check(tally, trials, CRASH_POINTS);
  }, 900_000);
});
