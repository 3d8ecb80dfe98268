/**
 * The record formats of `tidemark ingest --source kafka://... --format ...` (the command in this
 * process) on the test broker, each with the tombstones its topics carry: `canal-json` and
 * `maxwell-json` change events into a primary-key table (a canal event of several rows split by a
 * checkpoint, maxwell's bootstrap markers, tombstones skipped), and `json` into an append table
 * (tombstones skipped). `json` and `debezium-json` on primary-key tables are in kafka-source.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '@tidemark/cli';
import { openTable } from '@tidemark/core';
import { LocalFileIO } from '@tidemark/storage';
import { TextCapture } from './support/cli-main.js';
import { freshTopic, kafkaAvailable, kafkaSuite } from './support/kafka.js';

const run = kafkaAvailable('Kafka record format tests');
const io = new LocalFileIO();
const COLUMNS = JSON.stringify([
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'v', type: 'STRING' },
]);

// Broker round trips and table commits: generous under a loaded machine (no test asserts time).
describe.skipIf(!run)('Kafka record formats and their tombstones', { timeout: 300_000 }, () => {
  const k = kafkaSuite('kafka-formats', { brokers: 1 });

  async function tidemark(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const stdout = new TextCapture();
    const stderr = new TextCapture();
    const code = await main(args, { stdout, stderr, env: {}, signal: new AbortController().signal });
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  /** Creates a table, puts `messages` (values; null: a tombstone) into a topic of one partition, ingests it to its end. */
  async function ingest(
    name: string,
    format: string,
    messages: Array<object | null>,
    pk: boolean,
  ): Promise<{ table: string; summary: { records: number; checkpoints: number; offset: unknown } }> {
    const table = join(k.dir, `${name}.db`, 't');
    const create = ['create', table, '--schema', COLUMNS, ...(pk ? ['--primary-key', 'id', '--option', 'bucket=2'] : [])];
    const created = await tidemark(create);
    expect(created.code, created.stderr).toBe(0);
    const topic = freshTopic(name);
    await k.broker.createTopic(topic, 1);
    await k.producer.send({ topic, messages: messages.map((m) => ({ value: m === null ? null : JSON.stringify(m) })) });
    const args = ['ingest', table, '--source', `kafka://${k.broker.bootstrap}/${topic}`, '--format', format];
    const r = await tidemark([...args, '--state', join(k.dir, `${name}-state`), '--until-end', '--checkpoint-every', '2']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { records: number; checkpoints: number; offset: unknown };
    // Every message read, the tombstones too: the offset is past the last one.
    expect(summary.offset).toEqual({ [topic]: { 0: messages.length } });
    // A rerun finds nothing left to read.
    const again = await tidemark([...args, '--state', join(k.dir, `${name}-state`), '--until-end']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout.trim().split('\n').pop()!)).toMatchObject({ records: 0 });
    return { table, summary };
  }

  async function rows(table: string): Promise<string[]> {
    const t = await openTable(table, { fileIO: io });
    return (await t.newRead().toArrowTable())
      .toArray()
      .map((r) => `${Number(r.id)}=${String(r.v)}`)
      .sort();
  }

  it('canal-json: inserts of several rows, updates with old values, deletes; tombstones skipped', async () => {
    const { table, summary } = await ingest(
      'canal',
      'canal-json',
      [
        // Three rows in one event: the checkpoints (every 2 records) fall inside it.
        {
          data: [
            { id: '1', v: 'a' },
            { id: '2', v: 'b' },
            { id: '3', v: 'c' },
          ],
          old: null,
          type: 'INSERT',
          isDdl: false,
          table: 't',
        },
        { data: [{ id: '1', v: 'a2' }], old: [{ v: 'a' }], type: 'UPDATE', isDdl: false, table: 't' },
        null,
        { data: [{ id: '2', v: 'b' }], old: null, type: 'DELETE', isDdl: false, table: 't' },
        null,
        { data: [{ id: '4', v: 'd' }], type: 'INSERT', isDdl: false, table: 't' },
      ],
      true,
    );
    // +I +I +I, -U +U, -D, +I: the tombstones make no records.
    expect(summary.records).toBe(7);
    expect(await rows(table)).toEqual(['1=a2', '3=c', '4=d']);
  });

  it('maxwell-json: bootstrap markers and tombstones make no rows; updates and deletes apply', async () => {
    const { table, summary } = await ingest(
      'maxwell',
      'maxwell-json',
      [
        { database: 'db', table: 't', type: 'bootstrap-start', data: {} },
        { database: 'db', table: 't', type: 'bootstrap-insert', data: { id: 1, v: 'a' } },
        { database: 'db', table: 't', type: 'bootstrap-complete', data: {} },
        { database: 'db', table: 't', type: 'insert', data: { id: 2, v: 'b' } },
        null,
        { database: 'db', table: 't', type: 'update', data: { id: 1, v: 'a2' }, old: { v: 'a' } },
        { database: 'db', table: 't', type: 'delete', data: { id: 2, v: 'b' } },
        null,
        { database: 'db', table: 't', type: 'insert', data: { id: 3, v: 'c' } },
      ],
      true,
    );
    // +I, +I, -U +U, -D, +I.
    expect(summary.records).toBe(6);
    expect(await rows(table)).toEqual(['1=a2', '3=c']);
  });

  it('json on an append table: every row once, tombstones skipped', async () => {
    const values = [{ id: 1, v: 'a' }, null, { id: 2, v: 'b' }, { id: 2, v: 'b' }, null, { id: 3, v: 'c' }];
    const { table, summary } = await ingest('append', 'json', values, false);
    expect(summary.records).toBe(4);
    // An append table keeps both messages of id 2.
    expect(await rows(table)).toEqual(['1=a', '2=b', '2=b', '3=c']);
  });
});
