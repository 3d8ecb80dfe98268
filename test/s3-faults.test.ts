/**
 * S3 faults lose nothing: writes from 4 concurrent processes, `ingest` killed with SIGKILL at
 * random moments, snapshot expiration and orphan cleanup all run through a proxy in front of the
 * real S3 server that injects 503 SlowDown, 500 InternalError, connection resets before and in
 * the middle of the response body, truncated bodies and latency spikes. Afterwards the table holds
 * every row exactly once, `verify` finds every live file, and each failure a command reported was
 * one clear line after its bounded retries (never a hang or a stack trace).
 *
 * The longer run with more trials is `npm run chaos -- --s3 --faults 0.05` (figures in
 * benchmarks/results/).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTidemark, type ProcessResult } from './support/cli-process.js';
import { FaultProxy } from './support/fault-proxy.mjs';
import { cliS3Variables, s3Available, s3TestEnv, s3TestOptions } from './support/s3.js';
import { S3FileIO } from '@tidemark/storage';

const enabled = s3Available('S3 fault-injection suite');

/** The error lines tidemark printed (progress lines, warnings and the AWS SDK's Node-version notice aside). */
function ownLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('tidemark ') || (l.startsWith('tidemark: ') && !l.startsWith('tidemark: warning')));
}
const RATE = 0.06;

describe.skipIf(!enabled)('S3 faults through a fault-injecting proxy', () => {
  let proxy: FaultProxy;
  let endpoint: string;
  let dir: string;
  let table: string;
  const failures: string[] = [];

  beforeAll(async () => {
    const env = s3TestEnv()!;
    proxy = new FaultProxy(env.endpoint, { rate: RATE, seed: 20261201, latencyMs: [100, 600] });
    endpoint = await proxy.listen();
    dir = mkdtempSync(join(tmpdir(), 'tidemark-faults-'));
    table = `s3://${env.bucket}/faults-${Date.now()}-${randomBytes(3).toString('hex')}/db.db/t`;
  });

  afterAll(async () => {
    await proxy?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the CLI against the proxy; a failure must be one clear line, and is recorded. */
  async function cli(args: string[], options: { stdin?: string; direct?: boolean; killAfterMs?: number } = {}): Promise<ProcessResult> {
    const env = s3TestEnv()!;
    const r = await runTidemark(args, {
      env: cliS3Variables(env, options.direct ? env.endpoint : endpoint),
      timeoutMs: options.killAfterMs ?? 120_000,
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    });
    if (options.killAfterMs !== undefined && r.timedOut) return r; // killed on purpose
    expect(r.timedOut, `${args[0]} hung`).toBe(false);
    if (r.code !== 0) {
      failures.push(`${args[0]}: ${r.stderr.trim()}`);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr, r.stderr).not.toMatch(/\n\s+at /);
      expect(ownLines(r.stderr), r.stderr).toHaveLength(1);
    }
    return r;
  }

  /** Retries a command until it succeeds (a real job runner would); bounded. */
  async function untilDone(args: string[], stdin?: string): Promise<ProcessResult> {
    for (let attempt = 1; attempt <= 8; attempt++) {
      const r = await cli(args, stdin !== undefined ? { stdin } : {});
      if (r.code === 0) return r;
    }
    throw new Error(`${args.join(' ')} did not succeed in 8 attempts: ${failures.slice(-3).join(' | ')}`);
  }

  it('loses no row and deletes no live file', async () => {
    await untilDone(['create', table, '--schema', '[{"name":"id","type":"BIGINT NOT NULL"},{"name":"src","type":"STRING"}]']);

    // 4 writer processes, 3 idempotent commits each (a retried identifier is skipped once committed).
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let c = 0; c < 2; c++) {
        const rows = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: w * 10_000 + c * 100 + i, src: `w${w}` })).join('\n') + '\n';
        await untilDone(['write', table, '--commit-user', `writer-${w}`, '--commit-identifier', String(c + 1)], rows);
      }
    });
    await Promise.all(writers);

    // ingest, killed at random moments, rerun until it reports the source done.
    const source = join(dir, 'source.jsonl');
    writeFileSync(source, Array.from({ length: 1000 }, (_, i) => JSON.stringify({ id: 100_000 + i, src: 'ingest' })).join('\n') + '\n');
    const ingestArgs = ['ingest', table, '--source', source, '--commit-user', 'ingest-1', '--checkpoint-every', '100'];
    let done = false;
    let kills = 0;
    for (let run = 0; run < 25 && !done; run++) {
      // The first runs are killed at spread-out moments (start-up, reading, mid-commit).
      const killAfterMs = run < 5 ? 300 + ((run * 331) % 1000) : undefined;
      const r = await cli(ingestArgs, killAfterMs !== undefined ? { killAfterMs } : {});
      if (r.timedOut) kills++;
      else if (r.code === 0) done = JSON.parse(r.stdout.trim().split('\n').pop()!).status === 'source-done';
    }
    expect(done).toBe(true);

    // Maintenance through the faults: expiration and an aggressive orphan cleanup.
    await untilDone(['expire-snapshots', table, '--retain-min', '1', '--retain-max', '3']);
    await untilDone(['remove-orphan-files', table, '--older-than', '0s']);

    // Checked directly against the server: every row exactly once, every live file intact.
    const read = await cli(['read', table], { direct: true });
    expect(read.code).toBe(0);
    const ids = read.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id)
      .sort((a, b) => a - b);
    const expected = [
      ...[0, 1, 2, 3].flatMap((w) => [0, 1].flatMap((c) => Array.from({ length: 50 }, (_, i) => w * 10_000 + c * 100 + i))),
      ...Array.from({ length: 1000 }, (_, i) => 100_000 + i),
    ].sort((a, b) => a - b);
    expect(ids.length).toBe(expected.length); // nothing duplicated
    expect(ids).toEqual(expected); // nothing lost
    const verify = await cli(['verify', table], { direct: true });
    expect(verify.stdout).toMatch(/^ok: /m);
    expect(proxy.faults).toBeGreaterThan(10);
    expect(kills).toBeGreaterThan(0);
    console.log(
      `[s3-faults] ${proxy.requests} requests, ${proxy.faults} faults injected ${JSON.stringify(proxy.injected)}, ${kills} ingest kills, ` +
        `${failures.length} command failures reported (then retried), ${expected.length} rows, lost 0, duplicated 0`,
    );
  }, 300_000);

  it('truncated and reset response bodies are retried, never returned short', async () => {
    const env = s3TestEnv()!;
    const cut = new FaultProxy(env.endpoint, { rate: 0.5, kinds: ['truncate-body', 'reset-mid-body'], seed: 7 });
    const url = await cut.listen();
    const direct = new S3FileIO(s3TestOptions());
    const through = new S3FileIO(s3TestOptions({ endpoint: url, maxAttempts: 10 }));
    try {
      const path = `s3://${env.bucket}/faults-bodies-${randomBytes(4).toString('hex')}/blob`;
      const bytes = randomBytes(200_000);
      await direct.write(path, bytes);
      for (let i = 0; i < 10; i++) {
        expect(Buffer.from(await through.read(path)).equals(bytes)).toBe(true);
        expect(Buffer.from(await through.readRange(path, 1000, 50_000)).equals(bytes.subarray(1000, 51_000))).toBe(true);
      }
      expect(cut.faults).toBeGreaterThan(3);
      await direct.delete(path);
    } finally {
      await through.close();
      await direct.close();
      await cut.close();
    }
  }, 120_000);

  it('a store that keeps failing is reported in one line after bounded retries', async () => {
    const env = s3TestEnv()!;
    const down = new FaultProxy(env.endpoint, { rate: 1, kinds: ['slowdown'] });
    const url = await down.listen();
    try {
      const r = await runTidemark(['snapshots', table], {
        env: cliS3Variables(env, url),
        timeoutMs: 120_000,
      });
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(1);
      expect(ownLines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/SlowDown/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(down.requests).toBeGreaterThan(1); // retried
      expect(down.requests).toBeLessThan(30); // bounded
    } finally {
      await down.close();
    }
  }, 150_000);
});
