/**
 * `tidemark ingest` run as a service (the built binary in a child process, on local disk and on
 * the S3 server): JSON log lines, the metrics and health endpoints scraped mid-stream, SIGTERM
 * mid-stream (exit 0, the next run resumes exactly: every record once), the stop bound when the
 * store stops answering, and a library process that ends on its own after runIngest with a
 * metrics server. Needs `npx turbo run build`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import { storageBackends, type BackendWarehouse, type StorageBackend } from './support/backends.js';
import { backendEnv, cliFor } from './support/cli-backend.js';
import { runNode } from './support/cli-process.js';
import { ServiceProcess, scrapeMetrics } from './support/cli-service.js';
import { FaultProxy } from './support/fault-proxy.mjs';
import { cliS3Variables, s3TestEnv } from './support/s3.js';
import { packagesBuilt } from './support/built.js';

const built = packagesBuilt('ingest service tests', 'cli/dist/main.js');

const RECORDS = 60_000;
const EVERY = 1_000;
/** A hang guard, not a speed check: the runs below take seconds. */
const HANG_MS = 240_000;

async function tableIds(io: FileIO, location: string): Promise<number[]> {
  const t = await openTable(location, { fileIO: io });
  const data = await t.newRead().toArrowTable();
  const ids = data.getChild('id')!;
  const out: number[] = [];
  for (let i = 0; i < data.numRows; i++) out.push(Number(ids.get(i)));
  return out.sort((a, b) => a - b);
}

async function setUp(
  backend: StorageBackend,
  wh: BackendWarehouse,
  name: string,
): Promise<{ table: string; state: string; source: string }> {
  const table = `${wh.root}/${name}/db.db/t`;
  const created = await cliFor(backend)([
    'create',
    table,
    '--schema',
    '[{"name":"id","type":"BIGINT NOT NULL"},{"name":"v","type":"STRING"}]',
  ]);
  expect(created.code, created.stderr).toBe(0);
  const source = join(await localDir(wh), `${name}.jsonl`);
  let text = '';
  for (let i = 0; i < RECORDS; i++) text += `${JSON.stringify({ id: i, v: `value ${i}` })}\n`;
  await writeFile(source, text);
  return { table, state: `${wh.root}/${name}/state`, source };
}

let scratch: string | undefined;
async function localDir(wh: BackendWarehouse): Promise<string> {
  if (wh.root.startsWith('/')) return wh.root;
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  scratch ??= await mkdtemp(join(tmpdir(), 'tidemark-ingest-service-'));
  return scratch;
}
afterAll(async () => {
  if (scratch) await (await import('node:fs/promises')).rm(scratch, { recursive: true, force: true });
});

describe.skipIf(!built).each(storageBackends('ingest service'))('tidemark ingest as a service ($name)', (backend) => {
  let wh: BackendWarehouse;
  beforeAll(async () => {
    if (backend.available) wh = await backend.open();
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  it.skipIf(!backend.available)(
    'serves metrics and health, stops on SIGTERM mid-stream with exit 0, and the next run resumes exactly',
    async () => {
      const { table, state, source } = await setUp(backend, wh, 'sigterm');
      const ingest = ['ingest', table, '--source', source, '--state', state, '--checkpoint-every', String(EVERY)];
      const run = new ServiceProcess([...ingest, '--log-format', 'json', '--metrics-port', '0'], backendEnv(backend), HANG_MS);
      const url = (await run.event('serving metrics'))['url'] as string;
      const first = await run.event('checkpoint committed');
      const mid = await scrapeMetrics(url);
      const health = await fetch(url.replace('/metrics', '/healthz'));
      const ready = await fetch(url.replace('/metrics', '/readyz'));
      run.kill('SIGTERM');
      const r = await run.exited;
      expect(r.timedOut).toBe(false);
      expect(r.code, r.stderr).toBe(0);

      // Mid-stream: records counted, the file's lag in bytes above 0, process metrics too, healthy and ready.
      expect(mid.get('tidemark_ingest_records_total')).toBeGreaterThanOrEqual(EVERY);
      expect(mid.get('tidemark_ingest_checkpoints_total')).toBeGreaterThanOrEqual(1);
      expect(mid.get(`tidemark_ingest_source_lag{partition="${source}"}`)).toBeGreaterThan(0);
      expect(mid.get(`tidemark_ingest_committed_offset{partition="${source}"}`)).toBeGreaterThanOrEqual(first['offset'] as number);
      expect(mid.has('process_cpu_seconds_total')).toBe(true);
      expect(health.status).toBe(200);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ state: 'running', ready: true });

      // JSON log lines (each parsed as it arrived), the stop among them; nothing lost, the summary on stdout.
      expect(run.notJson).toEqual([]);
      for (const e of run.events) expect(Object.keys(e).slice(0, 3)).toEqual(['time', 'level', 'msg']);
      expect(run.events.find((e) => e.msg === 'stopping')).toMatchObject({ level: 'info', signal: 'SIGTERM' });
      const summary = JSON.parse(r.stdout) as { status: string; offset: number; records: number; lastCheckpointId: number };
      expect(summary.status).toBe('stopped');
      const checkpoints = run.events.filter((e) => e.msg === 'checkpoint committed');
      expect(summary.offset).toBe(checkpoints.at(-1)!['offset']);
      expect(summary.records).toBeLessThan(RECORDS);
      expect(await tableIds(wh.io, table)).toEqual([...Array(summary.records).keys()]);

      const again = await cliFor(backend)(ingest, { timeoutMs: HANG_MS });
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({
        status: 'source-done',
        restoredFrom: summary.lastCheckpointId,
        records: RECORDS - summary.records,
      });
      expect(await tableIds(wh.io, table)).toEqual([...Array(RECORDS).keys()]);
    },
    HANG_MS * 2,
  );

  it.skipIf(!backend.available || backend.name !== 'S3')(
    'ends within --stop-timeout with exit 0 when the store stops answering, and the next run resumes exactly',
    async () => {
      const { table, state, source } = await setUp(backend, wh, 'stall');
      const env = s3TestEnv()!;
      const proxy = new FaultProxy(env.endpoint, { rate: 0 });
      const endpoint = await proxy.listen();
      const ingest = ['ingest', table, '--source', source, '--state', state, '--checkpoint-every', String(EVERY)];
      try {
        const run = new ServiceProcess([...ingest, '--log-format', 'json', '--stop-timeout', '3s'], cliS3Variables(env, endpoint), HANG_MS);
        await run.event('checkpoint committed');
        proxy.stall();
        run.kill('SIGTERM');
        const r = await run.exited;
        expect(r.timedOut).toBe(false);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ status: 'stopped', stopTimedOut: true });
        expect(run.notJson).toEqual([]);
        expect(run.events.find((e) => e.level === 'warn' && /--stop-timeout/.test(e.msg))).toBeDefined();
      } finally {
        await proxy.close();
      }
      const again = await cliFor(backend)(ingest, { timeoutMs: HANG_MS });
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ status: 'source-done' });
      expect(await tableIds(wh.io, table)).toEqual([...Array(RECORDS).keys()]);
    },
    HANG_MS * 2,
  );
});

describe.skipIf(!built)('a library process running runIngest with a metrics server', () => {
  const worker = fileURLToPath(new URL('./workers/ingest-service-worker.mjs', import.meta.url));
  const [local] = storageBackends('ingest service library');
  let wh: BackendWarehouse;
  beforeAll(async () => {
    wh = await local!.open();
  });
  afterAll(async () => {
    await wh.cleanup();
  });

  it('stops on its signal and then ends on its own: no timer, socket or worker keeps it alive', async () => {
    const { table, state, source } = await setUp(local!, wh, 'library');
    const r = await runNode(worker, [table, source, state], { timeoutMs: HANG_MS });
    expect(r.timedOut).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; records: number; scraped: number };
    expect(out.status).toBe('stopped');
    expect(out.scraped).toBeGreaterThanOrEqual(EVERY);
    expect(await tableIds(wh.io, table)).toEqual([...Array(out.records).keys()]);
  });
});
