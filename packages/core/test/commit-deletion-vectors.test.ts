/**
 * Commits of deletion-vector changes: each rewrites the bucket's whole DV file from its base
 * snapshot, so a commit whose base DV file was replaced meanwhile is refused with the retryable
 * DeletionVectorConflictError (nothing of it visible) instead of dropping the other commit's
 * deletions; planned again from the latest snapshot, it keeps both. Vectors of data files that
 * are no longer live are refused too.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { INDEX_TYPE_DELETION_VECTORS } from '@tidemark/format';
import {
  BucketDvMaintainer,
  DeletionVectorConflictError,
  FileSystemCatalog,
  openTable,
  snapshotIndexEntries,
  type CommitMessage,
  type Table,
} from '../src/index.js';

let n = 0;
async function dvTable(): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://commit-dv-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'deletion-vectors.enabled': 'true' },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function restore(t: Table): Promise<BucketDvMaintainer> {
  const latest = await t.snapshotManager.latest();
  const entries = (await snapshotIndexEntries(t.fileIO, t.paths, latest)).filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS);
  return BucketDvMaintainer.restore(t.fileIO, t.paths, entries);
}

let files = 0;
async function dvMessage(t: Table, m: BucketDvMaintainer): Promise<CommitMessage> {
  const plan = await t.newRead().plan();
  const split = plan.splits[0]!;
  const inc = await m.prepareCommit(async (bytes) => {
    const name = `index-commit-dv-test-${files++}`;
    await t.fileIO.write(t.paths.indexPath(name), bytes);
    return name;
  });
  return {
    partition: split.partition,
    bucket: split.bucket,
    totalBuckets: 1,
    newFiles: [],
    compactNewIndexFiles: inc.newIndexFiles,
    compactDeletedIndexFiles: inc.deletedIndexFiles,
  };
}

async function keys(t: Table): Promise<number[]> {
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => (r.toJSON() as { k: number }).k)
    .sort((a, b) => a - b);
}

describe('commits of deletion-vector changes', () => {
  it('refuses a DV file rewritten from a stale base, and keeps both deletions when planned again', async () => {
    const t = await dvTable();
    await t.append(Array.from({ length: 10 }, (_, k) => ({ k, v: `v${k}` })));
    const file = (await t.newRead().plan()).splits[0]!.files[0]!.meta;
    expect(file.level).toBeGreaterThan(0);

    const first = await restore(t);
    const second = await restore(t);
    first.notifyNewDeletion(file.fileName, 0);
    second.notifyNewDeletion(file.fileName, 1);
    const m1 = await dvMessage(t, first);
    const m2 = await dvMessage(t, second);
    const r1 = await t.newCommit().commit({ identifier: 1n, messages: [m1] });
    expect(r1.status).toBe('committed');
    expect(await keys(t)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const before = await t.snapshotManager.latestId();
    const err = await t
      .newCommit()
      .commit({ identifier: 1n, messages: [m2] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeletionVectorConflictError);
    expect((err as DeletionVectorConflictError).retryable).toBe(true);
    expect((err as Error).message).toMatch(/bucket 0/);
    expect(await t.snapshotManager.latestId()).toBe(before);
    expect(await keys(t)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);

    // Planned again from the latest snapshot: both deletions stay.
    const again = await restore(t);
    again.notifyNewDeletion(file.fileName, 1);
    expect(await t.newCommit().commit({ identifier: 1n, messages: [await dvMessage(t, again)] })).toMatchObject({ status: 'committed' });
    expect(await keys(t)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses vectors of data files that are not live', async () => {
    const t = await dvTable();
    await t.append([{ k: 1, v: 'a' }]);
    const m = await restore(t);
    m.notifyNewDeletion('data-gone.parquet', 0);
    await expect(t.newCommit().commit({ identifier: 1n, messages: [await dvMessage(t, m)] })).rejects.toThrow(
      /no longer live: data-gone\.parquet/,
    );
  });
});

describe('DV file order', () => {
  it('follows Java HashMap iteration: by spread String.hashCode bucket, then insertion order', async () => {
    const { javaHashMapOrder, javaStringHash } = await import('../src/deletion-vectors/bucket-dv-maintainer.js');
    expect(javaStringHash('hello')).toBe(99162322);
    expect(javaStringHash('')).toBe(0);
    // 'a' = 97 -> bucket 1, 'b' = 98 -> bucket 2, 'q' = 113 -> bucket 1 (inserted after 'a').
    expect(javaHashMapOrder(['b', 'q', 'a'], 16, (k) => k)).toEqual(['q', 'a', 'b']);
    expect(javaHashMapOrder(['b', 'a', 'q'], 16, (k) => k)).toEqual(['a', 'q', 'b']);
    // A larger table separates 'a' (97 & 127) and 'q' (113 & 127).
    expect(javaHashMapOrder(['q', 'a'], 128, (k) => k)).toEqual(['a', 'q']);
  });
});
