/**
 * Crash-injection test of the exactly-once sink: runs test/chaos/harness.mjs, which drives the
 * `tidemark ingest` CLI as a child process (from the built dist: run `npx turbo run build` first),
 * SIGKILLs it at random moments and at the named crash points, restarts it until the source is
 * done, and checks that every source record is in the table exactly once, on local disk and on the
 * S3 server when one is configured. The primary-key trials ingest upserts and deletes (with a row
 * kind field) and check that every key holds its latest version, once; their writers compact at
 * almost every checkpoint (universal compaction, deletion vectors or `changelog-producer` =
 * `lookup`, in turn), so crashes land around checkpoints that carry a compaction, including
 * between a checkpoint's APPEND and COMPACT snapshots (`before-compact-snapshot`). The
 * dynamic-bucket trials do the same into a `bucket` = -1 table with two or three writers, which
 * receive records by assigned bucket and compact too; they also check that no snapshot has a bucket
 * written by two writers and that the hash index names every key once, where its row lives.
 *
 * Trial counts: `npm test` runs enough trials that each configuration crashes at every named crash
 * point it can reach (a trial's first run crashes at point `trial % points`; append tables never
 * reach `before-compact-snapshot`) and, with all but negligible odds, at a
 * random moment (0.3 to 0.5 random kills per local append trial were seen, 0.7 per S3 trial, 1.2 per
 * primary-key trial); the local soak counts (30 and 12 trials) run with `TIDEMARK_CHAOS_FULL=1`,
 * and `npm run chaos -- --trials 500` (test/chaos/harness.mjs) runs as many as wanted.
 */
import { describe, expect, it } from 'vitest';
import { CRASH_POINTS } from '@tidemark/sink';
import { packagesBuilt } from './support/built.js';
import { chaosHarness, expectExactlyOnce, type ChaosTally } from './support/chaos.js';
import { s3Available, s3TestEnv } from './support/s3.js';

interface Tally extends ChaosTally {
  corrupt: number;
  compactSnapshots: number;
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
    dynamic?: boolean;
    log?: (m: string) => void;
  }): Promise<Tally>;
}

const built = packagesBuilt('sink chaos tests', 'cli/dist/main.js', 'sink/dist/ingest-driver.js');

const full = process.env['TIDEMARK_CHAOS_FULL'] === '1';
/** Trials of one configuration: `quick` in `npm test` (at least one per crash point), `soak` with TIDEMARK_CHAOS_FULL=1. */
const trialCount = (quick: number, soak: number): number => (full ? soak : quick);
const LOCAL = trialCount(20, 30);
const S3 = 10;
const PK_LOCAL = trialCount(6, 12);
const PK_S3 = 6;
const DYNAMIC_LOCAL = trialCount(6, 12);
const DYNAMIC_S3 = 6;

async function harness(): Promise<Harness> {
  return chaosHarness<Harness>('harness.mjs');
}

/** Runs `options.trials` chaos trials, logs their tally (`[chaos <label>]`) and checks it ({@link check}). */
async function chaosTrials(label: string, options: Parameters<Harness['runChaos']>[0], pk = false): Promise<void> {
  const tally = await (await harness()).runChaos(options);
  console.log(`[chaos ${label}] ${JSON.stringify({ ...tally, failed: tally.failed.length })}`);
  check(tally, options.trials, pk);
}

function check(tally: Tally, trials: number, pk = false): void {
  expectExactlyOnce(tally, trials);
  expect(tally.corrupt).toBe(0);
  // the trials really crashed, and at named points as well as at random moments
  expect(tally.runs).toBeGreaterThan(trials);
  expect(tally.kills['random-kill'] ?? 0).toBeGreaterThan(0);
  expect(Object.keys(tally.kills).length).toBeGreaterThan(2);
  // Each trial's first run crashes at point `trial % points`: with that many trials or more, every
  // point was hit. Only primary-key writers compact, so only their trials reach 'before-compact-snapshot'.
  const points = pk ? CRASH_POINTS : CRASH_POINTS.filter((p) => p !== 'before-compact-snapshot');
  for (const point of points) expect(tally.kills[point] ?? 0, `kills at ${point}`).toBeGreaterThan(0);
  // Primary-key writers compacted (each trial also checks it, and that level 0 ends empty where it must).
  if (pk) expect(tally.compactSnapshots).toBeGreaterThan(0);
}

// The six configurations share nothing (own directories and S3 prefixes); the S3 ones mostly wait
// on the server, so they run concurrently with the local ones.
describe.skipIf(!built).concurrent('exactly-once ingest under SIGKILL', () => {
  it(`${LOCAL} trials on local disk lose and duplicate nothing`, async () => {
    await chaosTrials('local', { trials: LOCAL, records: 200, checkpointEvery: 50, concurrency: 4, crashRate: 0.6 });
  }, 600_000);

  it.skipIf(!s3Available('sink chaos on S3'))(
    `${S3} trials on the S3 server lose and duplicate nothing`,
    async () => {
      await chaosTrials('s3', { trials: S3, records: 200, checkpointEvery: 50, concurrency: 4, crashRate: 0.6, s3: s3TestEnv() });
    },
    600_000,
  );

  it(`${PK_LOCAL} primary-key trials on local disk: every key holds its latest version, once`, async () => {
    await chaosTrials('pk local', { trials: PK_LOCAL, records: 240, checkpointEvery: 40, concurrency: 4, crashRate: 0.85, pk: true }, true);
  }, 600_000);

  it.skipIf(!s3Available('primary-key sink chaos on S3'))(
    `${PK_S3} primary-key trials on the S3 server: every key holds its latest version, once`,
    async () => {
      await chaosTrials(
        'pk s3',
        { trials: PK_S3, records: 240, checkpointEvery: 40, concurrency: 3, crashRate: 0.85, pk: true, s3: s3TestEnv() },
        true,
      );
    },
    600_000,
  );

  it(`${DYNAMIC_LOCAL} dynamic-bucket trials on local disk: one writer per bucket, every key its latest version, once`, async () => {
    await chaosTrials(
      'dynamic local',
      { trials: DYNAMIC_LOCAL, records: 240, checkpointEvery: 40, concurrency: 3, crashRate: 0.85, dynamic: true },
      true,
    );
  }, 600_000);

  it.skipIf(!s3Available('dynamic-bucket sink chaos on S3'))(
    `${DYNAMIC_S3} dynamic-bucket trials on the S3 server: one writer per bucket, every key its latest version, once`,
    async () => {
      await chaosTrials(
        'dynamic s3',
        {
          trials: DYNAMIC_S3,
          records: 240,
          checkpointEvery: 40,
          concurrency: 3,
          crashRate: 0.85,
          dynamic: true,
          s3: s3TestEnv(),
        },
        true,
      );
    },
    600_000,
  );
});
