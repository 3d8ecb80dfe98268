/**
 * Crash-injection test of the exactly-once sink: runs test/chaos/harness.mjs, which drives the
 * `tidemark ingest` CLI as a child process (from the built dist: run `npx turbo run build` first),
 * SIGKILLs it at random moments and at the named crash points, restarts it until the source is
 * done, and checks that every source record is in the table exactly once. 30 trials on local disk,
 * 10 on the S3 server when one is configured. The primary-key trials ingest upserts and deletes
 * (with a row kind field) and check that every key holds its latest version, once.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { s3Available, s3TestEnv } from './support/s3.js';

interface Tally {
  trials: number;
  passed: number;
  failed: Array<{ trial: number; seed: number; problems: string[] }>;
  runs: number;
  kills: Record<string, number>;
  lost: number;
  duplicated: number;
  corrupt: number;
}
interface Harness {
  runChaos(options: {
    trials: number;
    records: number;
    checkpointEvery: number;
    concurrency: number;
    crashRate?: number;
    s3?: unknown;
    pk?: boolean;
    log?: (m: string) => void;
  }): Promise<Tally>;
}

const repo = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(`${repo}packages/cli/dist/main.js`) && existsSync(`${repo}packages/sink/dist/ingest-driver.js`);
if (!built) console.warn('[tidemark] SKIPPED sink chaos tests: packages are not built (run `npx turbo run build`)');

async function harness(): Promise<Harness> {
  return (await import(pathToFileURL(`${repo}test/chaos/harness.mjs`).href)) as Harness;
}

function check(tally: Tally, trials: number): void {
  if (tally.failed.length > 0) console.error(JSON.stringify(tally.failed, null, 2));
  expect(tally.failed).toEqual([]);
  expect(tally.passed).toBe(trials);
  expect(tally.lost).toBe(0);
  expect(tally.duplicated).toBe(0);
  expect(tally.corrupt).toBe(0);
  // the trials really crashed, and at named points as well as at random moments
  expect(tally.runs).toBeGreaterThan(trials);
  expect(tally.kills['random-kill'] ?? 0).toBeGreaterThan(0);
  expect(Object.keys(tally.kills).length).toBeGreaterThan(2);
}

describe.skipIf(!built)('exactly-once ingest under SIGKILL', () => {
  it('30 trials on local disk lose and duplicate nothing', async () => {
    const tally = await (await harness()).runChaos({ trials: 30, records: 200, checkpointEvery: 50, concurrency: 4, crashRate: 0.6 });
    console.log(`[chaos local] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
    check(tally, 30);
  }, 600_000);

  it.skipIf(!s3Available('sink chaos on S3'))(
    '10 trials on the S3 server lose and duplicate nothing',
    async () => {
      const tally = await (
        await harness()
      ).runChaos({ trials: 10, records: 200, checkpointEvery: 50, concurrency: 4, crashRate: 0.6, s3: s3TestEnv() });
      console.log(`[chaos s3] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
      check(tally, 10);
    },
    600_000,
  );

  it('12 primary-key trials on local disk: every key holds its latest version, once', async () => {
    const tally = await (
      await harness()
    ).runChaos({ trials: 12, records: 240, checkpointEvery: 40, concurrency: 4, crashRate: 0.85, pk: true });
    console.log(`[chaos pk local] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
    check(tally, 12);
  }, 600_000);

  it.skipIf(!s3Available('primary-key sink chaos on S3'))(
    '6 primary-key trials on the S3 server: every key holds its latest version, once',
    async () => {
      const tally = await (
        await harness()
      ).runChaos({ trials: 6, records: 240, checkpointEvery: 40, concurrency: 3, crashRate: 0.85, pk: true, s3: s3TestEnv() });
      console.log(`[chaos pk s3] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
      check(tally, 6);
    },
    600_000,
  );
});
