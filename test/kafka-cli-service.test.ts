/**
 * `tidemark ingest --source kafka://...` run as a service (the built binary, and `main()` in this
 * process where the end of a run must be held open): the metrics endpoint scraped while it follows
 * a topic a producer keeps writing to (records, a lag gauge per topic/partition, health and
 * readiness); SIGTERM or SIGINT mid-stream exits 0 and the next run resumes exactly (every message once),
 * also when the stop overruns `--stop-timeout`; after `--until-end` the lag of every partition is
 * 0; `--log-format json` keeps every stderr line JSON, the Kafka client's retry warnings included,
 * and never shows the SASL password. Needs `npx turbo run build`.
 */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '@tidemark/cli';
import { openTable } from '@tidemark/core';
import { LocalFileIO } from '@tidemark/storage';
import { TextCapture } from './support/cli-main.js';
import { KAFKA_CLI_BUILD, packagesBuilt } from './support/built.js';
import { runTidemark } from './support/cli-process.js';
import { ServiceProcess, promSamples, scrapeMetrics, type LogEvent } from './support/cli-service.js';
import {
  API_KEYS,
  ERROR_CODES,
  freshTopic,
  kafkaAvailable,
  kafkaSuite,
  produceIdValues,
  tableIds,
  type KafkaSuite,
} from './support/kafka.js';

const built = packagesBuilt('Kafka CLI service tests', ...KAFKA_CLI_BUILD);
const run = built && kafkaAvailable('Kafka CLI service tests');

/** A hang guard, not a speed check: the runs below take seconds on a quiet machine. */
const HANG_MS = 240_000;
const PARTITIONS = 3;
const COLUMNS = JSON.stringify([
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'v', type: 'STRING' },
]);

/**
 * Produces messages `{id, v}` with increasing ids (id i to partition i mod 3), 20 every 50 ms,
 * until stopped or `LIMIT` were produced: a loaded machine slows the service, and the work left
 * for the resuming run must not grow with that delay.
 */
class KeepProducing {
  static readonly LIMIT = 4_000;
  produced = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly k: KafkaSuite,
    private readonly topic: string,
  ) {
    this.done = this.loop();
    this.done.catch(() => undefined); // surfaced by stop()
  }

  private async loop(): Promise<void> {
    while (!this.stopped && this.produced < KeepProducing.LIMIT) {
      await produceIdValues(this.k.producer, this.topic, this.produced, this.produced + 20, { partitions: PARTITIONS });
      this.produced += 20;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops; resolves with the number of messages produced. */
  async stop(): Promise<number> {
    this.stopped = true;
    await this.done;
    return this.produced;
  }
}

/** The messages partition `p` holds once `total` were produced (id i went to partition i mod 3). */
const inPartition = (total: number, p: number): number => Math.max(0, Math.ceil((total - p) / PARTITIONS));

/** The ids before `offset` in each partition: what a checkpoint at that offset committed. */
function idsBefore(offset: Record<string, number>): number[] {
  const out: number[] = [];
  for (const [p, next] of Object.entries(offset)) for (let j = 0; j < next; j++) out.push(j * PARTITIONS + Number(p));
  return out.sort((a, b) => a - b);
}

const io = new LocalFileIO();

interface Summary {
  status: string;
  records: number;
  lastCheckpointId: number | null;
  restoredFrom: number | null;
  offset: Record<string, Record<string, number>>;
  abandonedCheckpoint?: number;
  stopTimedOut?: boolean;
}

const summaryOf = (stdout: string): Summary => JSON.parse(stdout.trim().split('\n').pop()!) as Summary;

describe.skipIf(!run)('tidemark ingest --source kafka:// as a service', { timeout: HANG_MS * 2 }, () => {
  const k = kafkaSuite('kafka-cli-service', { brokers: 1 });
  const uri = (topic: string): string => `kafka://${k.broker.bootstrap}/${topic}`;
  /** `ingest` of pipeline `p`'s topic into its table with its state, then `extra`. */
  const ingest = (p: { table: string; state: string; topic: string }, ...extra: string[]): string[] => [
    'ingest',
    p.table,
    '--source',
    uri(p.topic),
    '--state',
    p.state,
    ...extra,
  ];

  /** A fresh append table and a topic of 3 partitions. */
  async function pipeline(name: string): Promise<{ table: string; state: string; topic: string }> {
    const table = join(k.dir, `${name}.db`, 't');
    const created = await runTidemark(['create', table, '--schema', COLUMNS], { timeoutMs: HANG_MS });
    expect(created.code, created.stderr).toBe(0);
    const topic = freshTopic(name);
    await k.broker.createTopic(topic, PARTITIONS);
    return { table, state: join(k.dir, `${name}-state`), topic };
  }

  /** Stops the producer, ingests the topic to its end, and checks every message is in the table once. */
  async function resumeExactly(p: { table: string; state: string; topic: string }, producer: KeepProducing) {
    const total = await producer.stop();
    const again = await runTidemark(ingest(p, '--until-end'), {
      timeoutMs: HANG_MS,
    });
    expect(again.code, again.stderr).toBe(0);
    const second = summaryOf(again.stdout);
    expect(second.status).toBe('source-done');
    expect(second.restoredFrom).not.toBeNull();
    expect(second.offset).toEqual({ [p.topic]: { 0: inPartition(total, 0), 1: inPartition(total, 1), 2: inPartition(total, 2) } });
    expect(await tableIds(io, p.table)).toEqual([...Array(total).keys()]);
    return { total, second };
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'serves metrics and health while following a topic; %s mid-stream exits 0 and the next run resumes exactly',
    async (signal) => {
      const p = await pipeline(signal.toLowerCase());
      const producer = new KeepProducing(k, p.topic);
      const service = new ServiceProcess(
        ingest(
          p,
          '--checkpoint-every',
          '200',
          '--checkpoint-interval',
          '1s',
          '--metrics-port',
          '0',
          '--log-format',
          'json',
          '--stop-timeout',
          '120s',
        ),
        {},
        HANG_MS,
      );
      const url = (await service.event('serving metrics'))['url'] as string;
      await service.event('checkpoint committed', 2);
      const committed = service.events.filter((e) => e.msg === 'checkpoint committed');
      const recordsBefore = committed.reduce((n, e) => n + (e['records'] as number), 0);
      const lastOffset = committed.at(-1)!['offset'] as Record<string, Record<string, number>>;
      const mid = await scrapeMetrics(url);
      const health = await fetch(url.replace('/metrics', '/healthz'));
      const ready = await fetch(url.replace('/metrics', '/readyz'));
      service.kill(signal);
      const r = await service.exited;
      expect(r.timedOut).toBe(false);
      expect(r.code, r.stderr).toBe(0);

      // Mid-stream: the records read so far counted; for each partition of the topic, the end, the
      // committed offset (at least what the last logged checkpoint committed) and their difference.
      expect(mid.get('tidemark_ingest_records_total')).toBeGreaterThanOrEqual(recordsBefore);
      expect(mid.get('tidemark_ingest_checkpoints_total')).toBeGreaterThanOrEqual(2);
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const label = `{partition="${p.topic}/${partition}"}`;
        const end = mid.get(`tidemark_ingest_source_end_offset${label}`)!;
        const at = mid.get(`tidemark_ingest_committed_offset${label}`)!;
        expect(at).toBeGreaterThanOrEqual(lastOffset[p.topic]![partition]!);
        expect(end).toBeGreaterThanOrEqual(at);
        expect(mid.get(`tidemark_ingest_source_lag${label}`)).toBe(end - at);
      }
      expect([...mid.keys()].filter((key) => key.startsWith('tidemark_ingest_source_lag{'))).toHaveLength(PARTITIONS);
      expect(mid.get('tidemark_ingest_state{state="running"}')).toBe(1);
      expect(mid.has('process_cpu_seconds_total')).toBe(true);
      expect(health.status).toBe(200);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ state: 'running', ready: true, live: true });

      // The stop: logged, the last checkpoint committed in time (nothing abandoned), JSON lines only.
      expect(service.notJson).toEqual([]);
      expect(service.events.find((e) => e.msg === 'stopping')).toMatchObject({ level: 'info', signal });
      const first = summaryOf(r.stdout);
      expect(first.status).toBe('stopped');
      expect(first.stopTimedOut).toBeUndefined();
      expect(first.abandonedCheckpoint).toBeUndefined();
      const checkpoints = service.events.filter((e) => e.msg === 'checkpoint committed');
      expect(first.offset).toEqual(checkpoints.at(-1)!['offset']);
      expect(first.records).toBe(checkpoints.reduce((n, e) => n + (e['records'] as number), 0));
      // The table holds exactly the messages before the committed offsets, once.
      expect(await tableIds(io, p.table)).toEqual(idsBefore(first.offset[p.topic]!));

      // The producer went on meanwhile; the next run reads exactly what the first did not commit.
      const { total, second } = await resumeExactly(p, producer);
      expect(second.restoredFrom).toBe(first.lastCheckpointId);
      expect(second.records).toBe(total - first.records);
    },
  );

  it('a stop that overruns --stop-timeout still exits 0, and the next run resumes exactly', async () => {
    const p = await pipeline('overrun');
    const producer = new KeepProducing(k, p.topic);
    // 0 s: whatever the pipeline does when the signal comes, the stop is already overdue.
    const service = new ServiceProcess(ingest(p, '--checkpoint-every', '100', '--log-format', 'json', '--stop-timeout', '0s'), {}, HANG_MS);
    await service.event('checkpoint committed');
    service.kill('SIGTERM');
    const r = await service.exited;
    expect(r.timedOut).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(service.notJson).toEqual([]);
    const first = summaryOf(r.stdout);
    expect(first.status).toBe('stopped');
    // Either the command left the overdue checkpoint behind, or the pipeline abandoned it; both say so.
    const warned = service.events.filter((e) => e.level === 'warn').map((e) => e.msg);
    if (first.stopTimedOut === true) expect(warned.some((m) => /--stop-timeout/.test(m))).toBe(true);
    if (first.abandonedCheckpoint !== undefined) expect(warned.some((m) => /abandoned/.test(m))).toBe(true);
    // Where the next run restores from depends on how far the overdue checkpoint got (its state may
    // be durable); what the table ends with does not.
    await resumeExactly(p, producer);
  });

  it('after --until-end the lag of every partition is 0 and the compactions are timed (scraped before the process ends)', async () => {
    const table = join(k.dir, 'until-end.db', 't');
    const options = ['--primary-key', 'id', '--option', 'bucket=2', '--option', 'deletion-vectors.enabled=true'];
    expect((await runTidemark(['create', table, '--schema', COLUMNS, ...options], { timeoutMs: HANG_MS })).code).toBe(0);
    const topic = freshTopic('until-end');
    await k.broker.createTopic(topic, PARTITIONS);
    // 150 messages over 50 keys (upserts), each key in one partition (id mod 3), so its last
    // message wins: id ends as v<id + 100>.
    await k.producer.send({
      topic,
      messages: Array.from({ length: 150 }, (_, i) => ({
        partition: (i % 50) % PARTITIONS,
        value: JSON.stringify({ id: i % 50, v: `v${i}` }),
      })),
    });
    const stderr = new TextCapture();
    let atEnd: { metrics: Map<string, number>; health: number; ready: number } | undefined;
    // stdout gets the summary once everything is committed; holding its write holds the command
    // (and its metrics server) open while the endpoint is scraped.
    const stdout = new HeldWrites(async () => {
      const url = lines(stderr.text).find((e) => e.msg === 'serving metrics')!['url'] as string;
      const metrics = promSamples(await (await fetch(url)).text());
      const health = (await fetch(url.replace('/metrics', '/healthz'))).status;
      const ready = (await fetch(url.replace('/metrics', '/readyz'))).status;
      atEnd = { metrics, health, ready };
    });
    const args = ['ingest', table, '--source', `kafka://${k.broker.bootstrap}/${topic}`, '--state', join(k.dir, 'until-end-state')];
    const code = await main([...args, '--until-end', '--checkpoint-every', '40', '--metrics-port', '0', '--log-format', 'json'], {
      stdout,
      stderr,
      env: {},
      signal: new AbortController().signal,
    });
    expect(code, stderr.text).toBe(0);
    expect(JSON.parse(stdout.text)).toMatchObject({ status: 'source-done', records: 150 });
    const m = atEnd!.metrics;
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const label = `{partition="${topic}/${partition}"}`;
      expect(m.get(`tidemark_ingest_source_lag${label}`)).toBe(0);
      // Keys 0..49 by id mod 3, three messages each: 51, 51 and 48.
      const messages = 3 * inPartition(50, partition);
      expect(m.get(`tidemark_ingest_committed_offset${label}`)).toBe(messages);
      expect(m.get(`tidemark_ingest_source_end_offset${label}`)).toBe(messages);
    }
    expect(m.get('tidemark_ingest_records_total')).toBe(150);
    expect(m.get('tidemark_ingest_checkpoints_total')).toBe(4);
    // Deletion vectors: the writers compacted level 0 at the checkpoints, each compaction timed.
    expect(m.get('tidemark_ingest_compactions_total')).toBeGreaterThan(0);
    expect(m.get('tidemark_ingest_compaction_duration_seconds_count')).toBeGreaterThanOrEqual(m.get('tidemark_ingest_compactions_total')!);
    // The run ended: alive, no longer ready.
    expect([atEnd!.health, atEnd!.ready]).toEqual([200, 503]);
    expect(m.get('tidemark_ingest_state{state="stopped"}')).toBe(1);
    const rows = (await (await openTable(table, { fileIO: io })).newRead().toArrowTable()).toArray().map((r) => `${r.id}=${r.v}`);
    expect(rows.sort()).toEqual(Array.from({ length: 50 }, (_, id) => `${id}=v${id + 100}`).sort());
  });

  it("--log-format json: the Kafka client's retry warnings are JSON lines too", async () => {
    const p = await pipeline('json-retries');
    await produceIdValues(k.producer, p.topic, 0, 60, { partitions: PARTITIONS });
    // The next fetches fail with retriable errors: the source retries and warns.
    await k.broker.pushErrors(API_KEYS.Fetch, [ERROR_CODES.NOT_LEADER_OR_FOLLOWER!, ERROR_CODES.REQUEST_TIMED_OUT!]);
    const service = new ServiceProcess(ingest(p, '--until-end', '--log-format', 'json'), {}, HANG_MS);
    const r = await service.exited;
    expect(r.code, r.stderr).toBe(0);
    expect(service.notJson).toEqual([]);
    const retries = service.events.filter((e) => e.level === 'warn' && /^fetching .*retrying in \d+ ms/.test(e.msg));
    expect(retries.length, r.stderr).toBeGreaterThan(0);
    for (const e of service.events) expect(Object.keys(e).slice(0, 3)).toEqual(['time', 'level', 'msg']);
    expect(summaryOf(r.stdout)).toMatchObject({ status: 'source-done', records: 60 });
    expect(await tableIds(io, p.table)).toEqual([...Array(60).keys()]);
  });

  it('--log-format json with SASL: a failed connection is one JSON error event, and the password appears nowhere', async () => {
    const p = await pipeline('json-sasl');
    const secret = 'pa55-Very-Secret-json';
    const service = new ServiceProcess(
      ingest(p, '--until-end', '--log-format', 'json', '--kafka-sasl', 'scram-sha-512', '--kafka-user', 'svc'),
      { TIDEMARK_KAFKA_PASSWORD: secret, TIDEMARK_DEBUG: '1' },
      HANG_MS,
    );
    const r = await service.exited;
    expect(r.timedOut).toBe(false);
    // The test broker has no SASL: the handshake fails and the run with it.
    expect(r.code).toBe(1);
    expect(service.notJson).toEqual([]);
    const errors = service.events.filter((e: LogEvent) => e.level === 'error');
    expect(errors).toHaveLength(1);
    expect(r.stdout + r.stderr).not.toContain(secret);
  });
});

/** A writable stream whose every write completes only after `onWrite` settled. */
class HeldWrites extends Writable {
  text = '';
  constructor(private readonly onWrite: () => Promise<void>) {
    // A high-water mark of 1 byte: the command waits for the write ('drain') before it goes on.
    super({ highWaterMark: 1 });
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    this.onWrite().then(() => cb(), cb);
  }
}

function lines(text: string): LogEvent[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogEvent);
}
