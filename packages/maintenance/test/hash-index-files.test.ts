import { describe, expect, it } from 'vitest';
import { INDEX_TYPE_HASH, readIndexManifest } from '@tidemark/format';
import { DynamicBucketAssigner, SnapshotManager, withHashIndexChanges } from '@tidemark/core';
import { expireSnapshots, removeOrphanFiles } from '../src/index.js';
import { allFiles, createTestTable, type TestTable } from './helpers.js';

/** Commits the hash index of `hashes` assigned in the unpartitioned table (no data files needed for index lifecycles). */
async function commitHashes(t: TestTable, hashes: number[]): Promise<void> {
  const snapshots = new SnapshotManager(t.io, t.paths);
  const a = new DynamicBucketAssigner(t.io, t.commit.paths, await snapshots.latest(), { targetRowNum: 2 });
  const partition = Uint8Array.from([0, 0, 0, 0]);
  await a.load(partition);
  for (const h of hashes) await a.assign(partition, h);
  const messages = withHashIndexChanges([], await a.prepareIndexFiles(), a.baseSnapshotId);
  await t.commit.commit({ identifier: BigInt(Date.now()), messages }, { commitUser: 'hash' });
}

async function indexFiles(t: TestTable): Promise<string[]> {
  return (await allFiles(t.io, t.location))
    .filter((f) => f.includes('/index/'))
    .map((f) => f.slice(f.lastIndexOf('/') + 1))
    .sort();
}

async function liveHashFiles(t: TestTable): Promise<string[]> {
  const s = (await new SnapshotManager(t.io, t.paths).latest())!;
  const entries = await readIndexManifest(t.io, t.paths.manifestPath(s.indexManifest!));
  return entries
    .filter((e) => e.indexType === INDEX_TYPE_HASH)
    .map((e) => e.fileName)
    .sort();
}

describe('hash index files in maintenance', () => {
  it('expiration deletes replaced hash index files once no retained snapshot uses them, and keeps the live ones', async () => {
    const t = await createTestTable();
    await commitHashes(t, [1]); // bucket 0: [1]
    await commitHashes(t, [2]); // bucket 0: [1, 2] replaces the first file
    await commitHashes(t, [3]); // bucket 1: [3]
    expect(await indexFiles(t)).toHaveLength(3);
    const live = await liveHashFiles(t);
    expect(live).toHaveLength(2);
    const r = await expireSnapshots(t, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 });
    expect(r.snapshotsExpired).toBe(2);
    expect(await indexFiles(t)).toEqual(live);
  });

  it('orphan cleanup keeps index files of live snapshots and removes unreferenced ones', async () => {
    const t = await createTestTable();
    await commitHashes(t, [1, 2, 3]);
    const stray = t.paths.indexPath('index-00000000-0000-4000-8000-000000000000-0');
    await t.io.write(stray, new Uint8Array(8));
    await new Promise((r) => setTimeout(r, 20));
    await removeOrphanFiles(t, { olderThanMs: Date.now() - 1 });
    expect(await indexFiles(t)).toEqual(await liveHashFiles(t));
    expect(await liveHashFiles(t)).toHaveLength(2);
  });
});
