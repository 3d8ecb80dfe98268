/**
 * `tidemark ingest --source kafka://...` when the brokers are not there: an address nothing listens
 * on, and the test broker stopped in the middle of a run. After the client's retries the command
 * prints one actionable line (the request, the brokers, the cause, what to check), no stack trace,
 * exits 1 on its own, and the table keeps exactly what the committed checkpoints read. A cluster
 * that refuses the client's user (ACLs) is one such line too, at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaRequestError, KafkaUnavailableError, kafkajsClient } from '@tidemark/sink';
import { KAFKA_CLI_BUILD, packagesBuilt } from './support/built.js';
import { runTidemark, type ProcessResult } from './support/cli-process.js';
import { ERROR_CODES, freshTopic, kafkaAvailable, produceIdValues, producerFor, startKafka } from './support/kafka.js';
import { closedPort } from './support/net-ports.js';
import { ServiceProcess } from './support/cli-service.js';

const built = packagesBuilt('Kafka connection error CLI tests', ...KAFKA_CLI_BUILD);
/** The retries take about 12 s (100 ms doubling to 5 s, 8 attempts); a hang is what this guards. */
const HANG_GUARD_MS = 90_000;
const COLUMNS = JSON.stringify([
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'v', type: 'STRING' },
]);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidemark-kafka-connection-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function createTable(name: string): Promise<string> {
  const table = join(dir, 'db.db', name);
  const r = await runTidemark(['create', table, '--schema', COLUMNS]);
  expect(r.code, r.stderr).toBe(0);
  return table;
}

/** The failure line: the last line on stderr (the retries before it are warnings). */
function failureLine(r: ProcessResult): string {
  return r.stderr.trim().split('\n').pop()!;
}

function expectOneActionableLine(r: ProcessResult, request: RegExp, brokers: string): void {
  expect(r.timedOut, 'the process exits on its own').toBe(false);
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/unexpected error/);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(r.stderr).not.toMatch(/TIDEMARK_DEBUG/);
  const line = failureLine(r);
  expect(line).toMatch(
    new RegExp(`^tidemark ingest: ${request.source} failed after 8 attempts \\(brokers ${brokers.replace(/\./g, '\\.')}\\): `),
  );
  expect(line).toMatch(/ECONNREFUSED/); // the cause
  expect(line).toMatch(
    /check the broker addresses, that this host reaches them \(network, firewall, DNS\) and the TLS\/SASL settings \(TLS off, SASL off\)$/,
  );
  // Each retry of the failed request was a warning line naming it (other requests, such as a
  // report to the consumer group, may warn too).
  expect(r.stderr.match(new RegExp(`warning: ${request.source}: .*retrying in \\d+ ms`, 'g'))?.length).toBe(7);
}

describe.skipIf(!built)('tidemark ingest from Kafka brokers that are not there', () => {
  it('an address nothing listens on: exit 1 with one line naming the brokers, the cause and what to check; nothing committed', async () => {
    const table = await createTable('nobody');
    const broker = `127.0.0.1:${await closedPort()}`;
    const r = await runTidemark(
      ['ingest', table, '--source', `kafka://${broker}/orders`, '--state', join(dir, 'state-nobody'), '--until-end'],
      {
        timeoutMs: HANG_GUARD_MS,
      },
    );
    expectOneActionableLine(r, /reading the partitions of orders/, broker);
    expect(r.stdout).toBe('');
    const snapshots = await runTidemark(['snapshots', table, '--json']);
    expect(snapshots.code).toBe(0);
    expect(snapshots.stdout).toBe('');
  }, 120_000);

  it('SIGTERM while the retries run stops the run at once: exit 0, a stopped summary, no error', async () => {
    const table = await createTable('stopped-retrying');
    const broker = `127.0.0.1:${await closedPort()}`;
    const service = new ServiceProcess(
      ['ingest', table, '--source', `kafka://${broker}/orders`, '--state', join(dir, 'state-stopped-retrying'), '--log-format', 'json'],
      {},
      HANG_GUARD_MS,
    );
    // The first retry warning: the run is retrying the brokers.
    const retrying = (): boolean =>
      service.events.some((e) => e.level === 'warn' && /^reading the partitions of orders: .*retrying in/.test(e.msg));
    while (!retrying()) {
      const ended = await Promise.race([service.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))]);
      if (ended) throw new Error(`the run ended before it retried: ${(await service.exited).stderr}`);
    }
    service.kill('SIGTERM');
    const r = await service.exited;
    expect(r.timedOut).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(service.events.filter((e) => e.level === 'error')).toEqual([]);
    // It stopped before the retries ran out (their last one would be attempt 8).
    expect(service.events.some((e) => /attempt 8 of 8/.test(e.msg))).toBe(false);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ status: 'stopped', records: 0, checkpoints: 0 });
  }, 120_000);

  it('the client raises the typed KafkaUnavailableError (a user error) after its retries, with TLS and SASL named as set', async () => {
    const broker = `127.0.0.1:${await closedPort()}`;
    const client = kafkajsClient({
      brokers: [broker],
      retries: 3,
      ssl: true,
      sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'pa55-unreachable-secret' },
    });
    try {
      const err = await client.partitions(['orders']).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KafkaUnavailableError);
      expect(err).toBeInstanceOf(KafkaRequestError); // callers that caught the parent class still do
      const e = err as KafkaUnavailableError;
      expect(e.userError).toBe(true);
      expect(e.brokers).toEqual([broker]);
      expect(e.attempts).toBe(3);
      expect(e.message).toMatch(/^reading the partitions of orders failed after 3 attempts \(brokers 127\.0\.0\.1:\d+\): .*ECONNREFUSED/);
      expect(e.message).toMatch(/\(TLS on, SASL scram-sha-256\)$/);
      expect(e.message).not.toContain('pa55-unreachable-secret');
    } finally {
      await client.close();
    }
  }, 60_000);

  describe.skipIf(!kafkaAvailable('Kafka connection error CLI tests'))('with the test broker', () => {
    it('the broker stopped mid-run: exit 1 with one line; the table keeps the committed checkpoints once', async () => {
      const table = await createTable('stopped');
      const broker = await startKafka({ brokers: 1 });
      try {
        const topic = freshTopic('stopped');
        await broker.createTopic(topic, 2);
        const producer = await producerFor(broker);
        await produceIdValues(producer, topic, 0, 40);
        await producer.disconnect();
        // Followed (no --until-end): the run reads the 40 messages, commits, then waits for more.
        const running = runTidemark(
          [
            'ingest',
            table,
            '--source',
            `kafka://${broker.bootstrap}/${topic}`,
            '--state',
            join(dir, 'state-stopped'),
            '--checkpoint-every',
            '10',
            '--checkpoint-interval',
            '200ms',
          ],
          { timeoutMs: HANG_GUARD_MS },
        );
        const deadline = Date.now() + 60_000;
        for (;;) {
          const count = await runTidemark(['count', table]);
          if (count.code === 0 && count.stdout.trim() === '40') break;
          if (Date.now() > deadline) throw new Error(`the run did not commit the 40 records: ${count.stdout} ${count.stderr}`);
          await new Promise((r) => setTimeout(r, 300));
        }
        await broker.stop();
        const r = await running;
        expectOneActionableLine(r, /fetching [^ ]+/, broker.bootstrap);
        const ids = await runTidemark(['read', table, '--format', 'jsonl']);
        const read = ids.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { id: number }).id)
          .sort((a, b) => a - b);
        expect(read).toEqual([...Array(40).keys()]);
      } finally {
        await broker.stop();
      }
    }, 180_000);

    it('a topic the cluster does not authorize: exit 1 at once with one line naming the error and the ACLs to check', async () => {
      const table = await createTable('denied');
      const broker = await startKafka({ brokers: 1 });
      try {
        const topic = freshTopic('denied');
        await broker.createTopic(topic, 1);
        await broker.setTopicError(topic, ERROR_CODES.TOPIC_AUTHORIZATION_FAILED!);
        const r = await runTidemark(
          ['ingest', table, '--source', `kafka://${broker.bootstrap}/${topic}`, '--state', join(dir, 'state-denied')],
          {
            timeoutMs: HANG_GUARD_MS,
          },
        );
        expect(r.timedOut).toBe(false);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).not.toMatch(/unexpected error|warning|\n\s+at /);
        expect(r.stderr.trim()).toMatch(
          new RegExp(
            `^tidemark ingest: reading the partitions of ${topic}: the cluster \\(brokers ${broker.bootstrap.replace(/\./g, '\\.')}\\) ` +
              `refused access \\(TOPIC_AUTHORIZATION_FAILED\\): .*; check the ACLs of this client \\(no SASL user\\) for the topics and the consumer group$`,
          ),
        );
      } finally {
        await broker.stop();
      }
    }, 120_000);
  });
});
