/**
 * Several processes upsert and delete the same keys of a primary-key table at once (two fixed
 * buckets, and dynamic buckets)
 * (test/workers/pk-upsert-worker.mjs, run from the built dist: `npx turbo run build` first), on
 * local disk and on the real S3 server. Every process writes with a fresh writer per commit, so
 * their sequence numbers overlap; the commit must re-sequence so that a later snapshot wins.
 * Checked at every snapshot: no key appears twice, the table holds exactly what replaying the
 * commits in snapshot order gives, and each snapshot's delta holds exactly the rows its commit wrote.
 */
import { runWorkerProcess } from './support/cli-process.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalFileIO, S3FileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { serializeSchema } from '@tidemark/format';
import { TablePaths, buildInitialSchema, openTable, type Table } from '@tidemark/core';
import { forEachInParallel } from './support/in-parallel.js';
import { packagesBuilt } from './support/built.js';
import { s3Available, s3TestBucket, s3TestOptions, uniquePrefix } from './support/s3.js';
import { columns } from './support/table-definitions.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const worker = join(repo, 'test', 'workers', 'pk-upsert-worker.mjs');
const built = packagesBuilt('concurrent primary-key writes', 'core/dist/index.js');

const WORKERS = 3;
const COMMITS = 12;
const KEYS = 40;
const PER_COMMIT = 15;

interface WorkerLine {
  worker: number;
  commit: number;
  result: { status: string; snapshotId: number; snapshotIds: number[]; resequencedFiles?: number };
  rows: Array<[number, string | null]>;
}

async function runWorker(config: Record<string, unknown>): Promise<WorkerLine[]> {
  const out = await runWorkerProcess(worker, config, { cwd: repo });
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as WorkerLine);
}

/** key → value of the table at `snapshotId`, failing on a key that appears twice. */
async function state(table: Table, snapshotId: number): Promise<Map<number, string>> {
  const data = await table.newRead({ snapshotId }).toArrowTable();
  const out = new Map<number, string>();
  for (let i = 0; i < data.numRows; i++) {
    const k = Number(data.getChild('k')!.get(i));
    if (out.has(k)) throw new Error(`snapshot ${snapshotId}: key ${k} appears twice`);
    out.set(k, data.getChild('v')!.get(i) as string);
  }
  return out;
}

/** What one round exercised: writer COMPACT snapshots and files re-sequenced at commit. */
interface RoundCoverage {
  readonly compactions: number;
  readonly resequenced: number;
}

async function runAndVerify(io: FileIO, root: string, bucket: string, s3?: S3Options): Promise<RoundCoverage> {
  const schema = buildInitialSchema({
    fields: columns('k INT NOT NULL', 'v STRING', 'w INT', 'c INT'),
    primaryKeys: ['k'],
    // Dynamic buckets: the 40 keys fill two buckets of 20, so writers meet in both.
    options: { bucket, 'snapshot.num-retained.min': '1000', ...(bucket === '-1' ? { 'dynamic-bucket.target-row-num': '20' } : {}) },
  });
  await io.write(new TablePaths(root).schemaPath(0), serializeSchema(schema));
  const seed = Math.floor(Math.random() * 2 ** 30);
  // Every worker is waited for, so a failing one never leaves others writing into a deleted directory.
  const settled = await Promise.allSettled(
    Array.from({ length: WORKERS }, (_, w) =>
      runWorker({ root, worker: w, commits: COMMITS, keys: KEYS, perCommit: PER_COMMIT, seed: seed + w * 7919, ...(s3 ? { s3 } : {}) }),
    ),
  );
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const lines = settled.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  expect(lines).toHaveLength(WORKERS * COMMITS);
  expect(lines.every((l) => l.result.status === 'committed')).toBe(true);
  const resequenced = lines.reduce((n, l) => n + (l.result.resequencedFiles ?? 0), 0);

  const bySnapshot = new Map<number, WorkerLine>();
  for (const l of lines) bySnapshot.set(l.result.snapshotIds[0]!, l);
  const table = await openTable(root, { fileIO: io });
  const ids = await table.snapshotManager.sortedIds();
  expect(ids[0]).toBe(1);
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));

  const model = new Map<number, string>();
  let compactions = 0;
  // The model replays the commits in snapshot order; the snapshots' reads, independent of each
  // other, are then checked side by side against the model's state at each one.
  const kinds = await Promise.all(ids.map(async (id) => (await table.snapshotManager.snapshot(id)).commitKind));
  const checks: Array<{ id: number; line: WorkerLine | undefined; expected: Map<number, string> }> = [];
  for (const [i, id] of ids.entries()) {
    // A writer's COMPACT snapshot follows its APPEND one (possibly after other writers' snapshots):
    // it must read exactly what the model holds at that point, never an older value of a key.
    if (kinds[i] === 'COMPACT') compactions++;
    const line = bySnapshot.get(id);
    for (const [k, v] of line?.rows ?? []) {
      if (v === null) model.delete(k);
      else model.set(k, v);
    }
    checks.push({ id, line, expected: new Map(model) });
  }
  await forEachInParallel(checks, 8, async ({ id, line, expected }) => {
    if (line !== undefined) {
      // The snapshot's delta: exactly the upserts of its commit.
      const delta = await table.newIncrementalRead({ fromSnapshotId: id - 1, toSnapshotId: id }).toArrowTable();
      const got: string[] = [];
      for (let i = 0; i < delta.numRows; i++) got.push(`${delta.getChild('k')!.get(i)}=${delta.getChild('v')!.get(i)}`);
      const want = line.rows.filter(([, v]) => v !== null).map(([k, v]) => `${k}=${v}`);
      expect(got.sort(), `delta of snapshot ${id} (seed ${seed})`).toEqual(want.sort());
    }
    expect(await state(table, id), `state at snapshot ${id} (seed ${seed})`).toEqual(expected);
  });
  expect(await state(table, ids[ids.length - 1]!)).toEqual(model);
  return { compactions, resequenced };
}

/**
 * Runs verified rounds until the processes really wrote overlapping sequence numbers into the same
 * buckets (re-sequencing) and, on local disk, a writer compaction interleaved with the others'
 * writes; whether one round hits both depends on timing. On S3 nearly every commit overlaps another
 * one and is re-sequenced, which drops that writer's compaction, so none is required there.
 */
async function runRounds(next: (round: number) => Promise<RoundCoverage>, needCompaction: boolean, rounds: number): Promise<RoundCoverage> {
  let compactions = 0;
  let resequenced = 0;
  const add = (r: RoundCoverage): void => {
    compactions += r.compactions;
    resequenced += r.resequenced;
  };
  // The first `rounds` rounds are separate tables with their own writers: they run side by side (each
  // table sees the same contention as alone, and the waits on storage overlap). Every round is
  // waited for, so a failing one never leaves others writing into a deleted directory.
  const settled = await Promise.allSettled(Array.from({ length: rounds }, (_, round) => next(round)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const r of settled) if (r.status === 'fulfilled') add(r.value);
  for (let round = rounds; round < rounds + EXTRA_ROUNDS; round++) {
    if (resequenced > 0 && (!needCompaction || compactions > 0)) break;
    add(await next(round));
  }
  expect(resequenced, 'files re-sequenced over all rounds').toBeGreaterThan(0);
  if (needCompaction) expect(compactions, 'writer compactions over all rounds').toBeGreaterThan(0);
  return { compactions, resequenced };
}

/**
 * Tables per test, each written by {@link WORKERS} processes; `TIDEMARK_CONCURRENCY_ROUNDS` raises it
 * (soak runs). Local disk needs two for its coverage (re-sequencing and a writer compaction) to show
 * in most runs. On S3 nearly every commit is re-sequenced (two rounds re-sequenced 136 to 184 files):
 * a second round there added no case the first lacks, and each S3 case took two minutes of the
 * suite on 2 cores; the extra rounds below still run if a round happened to re-sequence nothing.
 */
const ROUNDS = process.env['TIDEMARK_CONCURRENCY_ROUNDS'] === undefined ? undefined : Number(process.env['TIDEMARK_CONCURRENCY_ROUNDS']);
const LOCAL_ROUNDS = ROUNDS ?? 2;
const S3_ROUNDS = ROUNDS ?? 1;
/** Extra rounds allowed when the first ones happened not to overlap (see {@link runRounds}). */
const EXTRA_ROUNDS = 4;

// The four cases share nothing (own tables, own processes) and the S3 ones mostly wait on the
// server: they run concurrently.
describe.skipIf(!built).concurrent.each([
  { mode: 'fixed buckets', bucket: '2' },
  { mode: 'dynamic buckets', bucket: '-1' },
])('concurrent primary-key writers from separate processes ($mode)', ({ bucket }) => {
  it(`local disk: ${WORKERS} processes updating the same keys keep snapshot order`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-pk-concurrent-'));
    try {
      const { compactions, resequenced } = await runRounds(
        (round) => runAndVerify(new LocalFileIO(), join(dir, `wh${round}`, 'db.db', 't'), bucket),
        true,
        LOCAL_ROUNDS,
      );
      console.info(`[concurrent-pk-writes] bucket ${bucket}, local: ${compactions} writer compactions, ${resequenced} files re-sequenced`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it.skipIf(!s3Available('concurrent primary-key writes on S3'))(
    `S3: ${WORKERS} processes updating the same keys keep snapshot order`,
    async () => {
      const options = s3TestOptions();
      const io = new S3FileIO(options);
      try {
        const { compactions, resequenced } = await runRounds(
          () => runAndVerify(io, `s3://${s3TestBucket()}/${uniquePrefix('concurrent-pk')}/db.db/t`, bucket, options),
          false,
          S3_ROUNDS,
        );
        console.info(`[concurrent-pk-writes] bucket ${bucket}, S3: ${compactions} writer compactions, ${resequenced} files re-sequenced`);
      } finally {
        await io.close();
      }
    },
    600_000,
  );
});
