import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FileIOCheckpointStore,
  IngestMetrics,
  JsonLinesFileSource,
  SinkUsageError,
  runIngest,
  startMetricsServer,
  type MetricsServer,
  type ReplayableSource,
  type SourceOffset,
  type SourceOpenOptions,
  type SourceRecord,
} from '../src/index.js';
import { memoryTable, pkDvTable, promSamples, tableIds, tempFiles } from './helpers.js';

const temp = tempFiles('tidemark-metrics-');
afterAll(() => temp.cleanup());
const jsonLines = (rows: readonly object[]): Promise<string> => temp.file('in.jsonl', rows.map((r) => JSON.stringify(r) + '\n').join(''));

async function scrape(server: MetricsServer): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0.0.4/);
  return promSamples(await res.text());
}

async function health(server: MetricsServer, path: '/healthz' | '/readyz'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** `source`, with `at` awaited before the record at index `index` is handed on (a scrape mid-stream). */
function pausing<T>(source: ReplayableSource<T>, index: number, at: () => Promise<void>): ReplayableSource<T> {
  return {
    id: source.id,
    bounded: source.bounded,
    backlog: source.backlog!.bind(source),
    async *open(from: SourceOffset, options?: SourceOpenOptions): AsyncIterable<SourceRecord<T>> {
      let i = 0;
      for await (const r of source.open(from, options)) {
        if (i++ === index) await at();
        yield r;
      }
    },
  };
}

describe('IngestMetrics and the metrics server', () => {
  it('counts records, checkpoints and commit attempts, and the lag of a file falls to 0 at its end', async () => {
    const { io, location } = await memoryTable();
    const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, v: `v${i}` }));
    const path = await jsonLines(rows);
    const lineBytes = rows.map((r) => JSON.stringify(r).length + 1);
    const metrics = new IngestMetrics();
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    const lag = `tidemark_ingest_source_lag{partition="${resolve(path)}"}`;
    const during: Array<Map<string, number>> = [];
    const ready: number[] = [];
    try {
      const source = pausing(new JsonLinesFileSource(path), 25, async () => {
        during.push(await scrape(server));
        ready.push((await health(server, '/readyz')).status);
      });
      const s = await runIngest({
        table: location,
        fileIO: io,
        source,
        stateStore: new FileIOCheckpointStore(io, `${location}-state`),
        checkpointEvery: 10,
        observer: metrics,
      });
      expect(s.status).toBe('source-done');
      // Mid-stream: 25 records read, checkpoint 2 (20 records) committed, the rest of the file behind.
      const mid = during[0]!;
      expect(mid.get('tidemark_ingest_records_total')).toBe(25);
      expect(mid.get('tidemark_ingest_checkpoints_total')).toBe(2);
      const size = lineBytes.reduce((a, b) => a + b, 0);
      const committed = lineBytes.slice(0, 20).reduce((a, b) => a + b, 0);
      expect(mid.get(lag)).toBe(size - committed);
      expect(mid.get('tidemark_ingest_state{state="running"}')).toBe(1);
      expect(ready).toEqual([200]);

      const end = await scrape(server);
      expect(end.get('tidemark_ingest_records_total')).toBe(50);
      expect(end.get('tidemark_ingest_checkpoints_total')).toBe(5);
      expect(end.get(lag)).toBe(0);
      expect(end.get(`tidemark_ingest_source_end_offset{partition="${resolve(path)}"}`)).toBe(size);
      expect(end.get('tidemark_ingest_checkpoint_duration_seconds_count')).toBe(5);
      expect(end.get('tidemark_ingest_commit_attempts_total{outcome="created"}')).toBeGreaterThanOrEqual(5);
      expect(end.get('tidemark_ingest_commit_retries_total')).toBe(0);
      expect(end.get('tidemark_ingest_last_commit_age_seconds')).toBeGreaterThanOrEqual(0);
      expect(end.get('tidemark_ingest_state{state="stopped"}')).toBe(1);
      expect(await health(server, '/healthz')).toMatchObject({
        status: 200,
        body: { live: true, state: 'stopped', lastCheckpointId: '5' },
      });
      expect((await health(server, '/readyz')).status).toBe(503);
      expect(await tableIds(io, location)).toEqual(rows.map((r) => r.id));
    } finally {
      await server.close();
    }
  });

  it("counts the writers' compactions of a primary-key table", async () => {
    const { io, location } = await pkDvTable('memory://metrics-pk/db.db/t', 1);
    const path = await jsonLines(Array.from({ length: 40 }, (_, i) => ({ id: i % 10, v: `v${i}` })));
    const metrics = new IngestMetrics();
    await runIngest({
      table: location,
      fileIO: io,
      source: new JsonLinesFileSource(path),
      commitUser: 'pk',
      checkpointEvery: 10,
      observer: metrics,
    });
    const m = promSamples(await metrics.registry.metrics());
    // Deletion vectors: every checkpoint after the first compacts level 0 away.
    expect(m.get('tidemark_ingest_compactions_total')).toBeGreaterThanOrEqual(3);
    expect(m.get('tidemark_ingest_compaction_files_total{side="before"}')).toBeGreaterThanOrEqual(3);
    expect(m.get('tidemark_ingest_checkpoint_prepare_seconds_count')).toBe(4);
  });

  it('maps commit attempts, a failure and a stop to counters and health', async () => {
    let now = 1_000_000;
    const metrics = new IngestMetrics({ now: () => now });
    const attempt = { commitUser: 'u', identifier: 1n, snapshotId: 1, attemptMs: 1, waitMs: 0 };
    metrics.commitAttempt({ ...attempt, retry: 0, outcome: 'already-exists' });
    metrics.commitAttempt({ ...attempt, retry: 1, outcome: 'error' });
    metrics.commitAttempt({ ...attempt, retry: 2, outcome: 'created' });
    now += 7_000;
    let m = promSamples(await metrics.registry.metrics());
    expect(m.get('tidemark_ingest_commit_attempts_total{outcome="already-exists"}')).toBe(1);
    expect(m.get('tidemark_ingest_commit_attempts_total{outcome="created"}')).toBe(1);
    expect(m.get('tidemark_ingest_commit_retries_total')).toBe(2);
    // No commit yet: the age counts from the start, so an alert on it also fires for a pipeline that never commits.
    expect(m.get('tidemark_ingest_last_commit_age_seconds')).toBe(7);
    expect(metrics.health()).toMatchObject({ state: 'starting', live: true, ready: false });
    metrics.stopping();
    expect(metrics.health()).toMatchObject({ state: 'stopping', ready: false });
    metrics.ended({ error: new Error('the store went away') });
    expect(metrics.health()).toMatchObject({ state: 'failed', live: false, error: 'the store went away' });
    m = promSamples(await metrics.registry.metrics());
    expect(m.get('tidemark_ingest_state{state="failed"}')).toBe(1);
  });

  it('answers unknown paths with 404, refuses a port in use, and closes with a connection open', async () => {
    const metrics = new IngestMetrics();
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    try {
      expect((await fetch(`${server.url}/nope`)).status).toBe(404);
      expect((await scrape(server)).has('tidemark_ingest_records_total')).toBe(true);
      await expect(startMetricsServer(new IngestMetrics(), { port: server.port, host: '127.0.0.1' })).rejects.toThrow(SinkUsageError);
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/metrics`)).rejects.toThrow();
  });
});
