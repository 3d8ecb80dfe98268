/**
 * Four separate Node processes make 25 commits each to one table (local disk, and the real S3
 * server when configured): the commit protocol must yield 100 contiguous snapshots holding every
 * file exactly once. The worker (test/workers/commit-worker.ts) is bundled to JS with rolldown
 * (vite's bundler, already installed with vitest) so the children run the current sources.
 */
import { runWorkerProcess } from './support/cli-process.js';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { FileIO, S3Options } from '@tidemark/storage';
import { serializeSchema, type TableSchema } from '@tidemark/format';
import { SnapshotManager, TablePaths, liveEntries } from '@tidemark/core';
import { itOnDiskAndS3 } from './support/table-locations.js';
import { bundleWorker, removeWorkerBundle } from './support/worker-bundle.js';

const WORKERS = 4;
const COMMITS = 25;
let bundle = '';

beforeAll(async () => {
  bundle = await bundleWorker('commit-worker');
}, 120_000);

afterAll(async () => {
  await removeWorkerBundle(bundle);
});

function runWorker(config: { root: string; worker: number; commits: number; s3?: S3Options }): Promise<string> {
  return runWorkerProcess(bundle, config);
}

const schema: TableSchema = {
  version: 3,
  id: 0,
  fields: [{ id: 0, name: 'id', type: { root: 'INT', nullable: true } }],
  highestFieldId: 0,
  partitionKeys: [],
  primaryKeys: [],
  options: { bucket: '-1', 'file.format': 'parquet' },
  timeMillis: 0,
};

async function runAndVerify(io: FileIO, root: string, s3?: S3Options): Promise<void> {
  const paths = new TablePaths(root);
  await io.write(paths.schemaPath(0), serializeSchema(schema));
  const outputs = await Promise.all(
    Array.from({ length: WORKERS }, (_, w) => runWorker({ root, worker: w, commits: COMMITS, ...(s3 ? { s3 } : {}) })),
  );
  const results = outputs.flatMap((o) =>
    o
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { result: { status: string; snapshotId: number } }),
  );
  expect(results).toHaveLength(WORKERS * COMMITS);
  expect(results.every((r) => r.result.status === 'committed')).toBe(true);
  // Every commit reported a distinct snapshot id.
  expect(new Set(results.map((r) => r.result.snapshotId)).size).toBe(WORKERS * COMMITS);

  const snapshots = new SnapshotManager(io, paths);
  const ids = await snapshots.sortedIds();
  expect(ids).toEqual(Array.from({ length: WORKERS * COMMITS }, (_, i) => i + 1));
  const seen = new Set<string>();
  for (const id of ids) {
    const s = await snapshots.snapshot(id);
    const key = `${s.commitUser}/${s.commitIdentifier}`;
    expect(seen.has(key)).toBe(false);
    seen.add(key);
  }
  const latest = (await snapshots.latest())!;
  expect(latest.totalRecordCount).toBe(WORKERS * COMMITS);
  // liveEntries throws on a file added twice; every expected file must be present exactly once.
  const live = [...(await liveEntries(io, paths, latest)).values()].map((e) => e.file.fileName).sort();
  const expected: string[] = [];
  for (let w = 0; w < WORKERS; w++) for (let c = 1; c <= COMMITS; c++) expected.push(`data-w${w}-c${c}.parquet`);
  expect(live).toEqual(expected.sort());
}

describe('concurrent commits from separate processes', () => {
  itOnDiskAndS3(
    'concurrent commits on S3',
    '4 processes x 25 commits give 100 contiguous snapshots with every file once',
    { diskPrefix: 'tidemark-concurrent-', s3Label: 'concurrent-commits' },
    runAndVerify,
    { disk: 300_000, s3: 600_000 },
  );
});
