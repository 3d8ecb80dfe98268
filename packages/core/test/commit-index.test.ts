import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BATCH_COMMIT_IDENTIFIER,
  decodeHashIndex,
  encodeHashIndex,
  hashIndexFileMeta,
  indexFileName,
  readAvroHeader,
  readIndexManifest,
  type IndexFileMeta,
  type IndexManifestEntry,
} from '@tidemark/format';
import { APPENDIX_A_INDEX_MANIFEST } from '../../format/test/appendix-a.js';
import type { CommitMessage } from '../src/commit-message.js';
import { DynamicBucketConflictError } from '../src/commit/index-changes.js';
import { rollbackTo } from '../src/rollback.js';
import { createTestTable, dataFile, liveFileNames, partitionBytes, type TestTable } from './commit-helpers.js';

const FAST = { commitOptions: { minRetryWaitMs: 1, maxRetryWaitMs: 5 } };
const PK_OPTIONS = { bucket: '-1' };

/** A hash index file as an assigner writes it; files of one assigner share `writer` (its uuid). */
async function hashFile(
  t: TestTable,
  hashes: number[],
  writer: { uuid: string; n: number } = { uuid: randomUUID(), n: 0 },
): Promise<IndexFileMeta> {
  const name = indexFileName(writer.uuid, writer.n++);
  const bytes = encodeHashIndex(hashes);
  await t.io.write(t.paths.indexPath(name), bytes);
  return hashIndexFileMeta(name, bytes.length, hashes.length);
}

function msg(dt: string, bucket: number, parts: Partial<CommitMessage>): CommitMessage {
  return { partition: partitionBytes(dt), bucket, totalBuckets: -1, newFiles: [dataFile(1)], ...parts };
}

async function liveIndex(t: TestTable, snapshotId?: number): Promise<IndexManifestEntry[]> {
  const s = snapshotId === undefined ? await t.snapshots.latest() : await t.snapshots.snapshot(snapshotId);
  if (!s?.indexManifest) return [];
  return readIndexManifest(t.io, t.paths.manifestPath(s.indexManifest));
}

async function hashesByBucket(t: TestTable, dt = 'a'): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  const p = Buffer.from(partitionBytes(dt)).toString('hex');
  for (const e of await liveIndex(t)) {
    if (Buffer.from(e.partition).toString('hex') !== p) continue;
    expect(out.has(e.bucket)).toBe(false);
    const path = t.paths.indexPath(e.fileName);
    out.set(
      e.bucket,
      [...decodeHashIndex(await t.io.read(path), path, e.rowCount)].sort((x, y) => x - y),
    );
  }
  return out;
}

/**
 * The commit treats hash index entries alike for any table, so an append-table schema serves (its
 * data file records need no files, which primary-key commits would read to check sequence order).
 */
async function pkTable(): Promise<TestTable> {
  return createTestTable({ options: PK_OPTIONS, commit: FAST });
}

const commit = (t: TestTable, user: string, messages: CommitMessage[]) =>
  t.commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages }, { commitUser: user });

describe('FileStoreCommit: index files', () => {
  it('writes a full index manifest per snapshot: one hash file per bucket, replaced by the next, carried forward otherwise', async () => {
    const t = await pkTable();
    const a0 = await hashFile(t, [1, 2]);
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [a0], indexBaseSnapshotId: null })]);
    const s1 = (await t.snapshots.latest())!;
    expect(s1.indexManifest).toMatch(/^index-manifest-[0-9a-f-]+-\d+$/);
    const header = await readAvroHeader(await t.io.read(t.paths.manifestPath(s1.indexManifest!)), { path: 'im' });
    expect(header.schemaText).toBe(APPENDIX_A_INDEX_MANIFEST);
    expect((await liveIndex(t)).map((e) => [e.kind, e.bucket, e.indexType, e.fileName, e.rowCount, e.fileSize])).toEqual([
      ['ADD', 0, 'HASH', a0.fileName, 2, 8],
    ]);

    const a0b = await hashFile(t, [1, 2, 3]);
    const a1 = await hashFile(t, [4]);
    await commit(t, 'u', [
      msg('a', 0, { newIndexFiles: [a0b], deletedIndexFiles: [a0], indexBaseSnapshotId: 1 }),
      msg('a', 1, { newIndexFiles: [a1], indexBaseSnapshotId: 1 }),
    ]);
    expect([...(await hashesByBucket(t)).entries()].sort()).toEqual([
      [0, [1, 2, 3]],
      [1, [4]],
    ]);
    // A data-only commit keeps the index manifest as it is.
    const s2 = (await t.snapshots.latest())!;
    await commit(t, 'u', [msg('a', 0, {})]);
    expect((await t.snapshots.latest())!.indexManifest).toBe(s2.indexManifest);
    // The first snapshot still sees its own index.
    expect((await liveIndex(t, 1)).map((e) => e.fileName)).toEqual([a0.fileName]);
  });

  it('concurrent commits to other buckets of the partition both stay in the index', async () => {
    const t = await pkTable();
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: null })]);
    const base = (await liveIndex(t))[0]!;
    // Both planned against snapshot 1: P1 rewrote bucket 0, P2 opened bucket 1, no shared new key.
    await commit(t, 'p1', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 10])], deletedIndexFiles: [base], indexBaseSnapshotId: 1 }),
    ]);
    await commit(t, 'p2', [msg('a', 1, { newIndexFiles: [await hashFile(t, [20])], indexBaseSnapshotId: 1 })]);
    expect([...(await hashesByBucket(t)).entries()].sort()).toEqual([
      [0, [1, 10]],
      [1, [20]],
    ]);
  });

  it("two commits rewriting one bucket: the later one merges the other side's hashes into a new file", async () => {
    const t = await pkTable();
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: null })]);
    const base = (await liveIndex(t))[0]!;
    await commit(t, 'p1', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 10, 30])], deletedIndexFiles: [base], indexBaseSnapshotId: 1 }),
    ]);
    const p2File = await hashFile(t, [1, 20, 30]);
    await commit(t, 'p2', [msg('a', 0, { newIndexFiles: [p2File], deletedIndexFiles: [base], indexBaseSnapshotId: 1 })]);
    const live = await liveIndex(t);
    expect(live).toHaveLength(1);
    // Neither side's file: a merged one written by the commit.
    expect(live[0]!.fileName).not.toBe(p2File.fileName);
    expect((await hashesByBucket(t)).get(0)).toEqual([1, 10, 20, 30]);
    expect(await liveFileNames(t)).toHaveLength(3);
  });

  it('the same new key in two buckets fails the later commit with a retryable DynamicBucketConflictError and leaves the table as it was', async () => {
    const t = await pkTable();
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: null })]);
    const base = (await liveIndex(t))[0]!;
    await commit(t, 'p1', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 10])], deletedIndexFiles: [base], indexBaseSnapshotId: 1 }),
      msg('a', 1, { newIndexFiles: [await hashFile(t, [77])], indexBaseSnapshotId: 1 }),
    ]);
    const before = await t.snapshots.latestId();
    const files = await liveFileNames(t);
    const p2 = commit(t, 'p2', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 77])], deletedIndexFiles: [base], indexBaseSnapshotId: 1 }),
    ]);
    await expect(p2).rejects.toBeInstanceOf(DynamicBucketConflictError);
    await expect(p2).rejects.toMatchObject({ retryable: true, keyCount: 1, latestSnapshotId: 2 });
    expect(await t.snapshots.latestId()).toBe(before);
    expect(await liveFileNames(t)).toEqual(files);
    // Nothing the failed commit wrote stays behind in manifest/ (index files it merged included).
    const names: string[] = [];
    for await (const st of t.io.list(t.paths.indexDir)) names.push(st.path.slice(st.path.lastIndexOf('/') + 1));
    const used = new Set((await Promise.all([1, 2].map((id) => liveIndex(t, id)))).flat().map((e) => e.fileName));
    expect(names.filter((n) => !used.has(n))).toHaveLength(1); // only the test's own unmerged p2 file
  });

  it('without a known base, every hash file of the partition is checked', async () => {
    const t = await pkTable();
    await commit(t, 'u', [msg('a', 3, { newIndexFiles: [await hashFile(t, [5])], indexBaseSnapshotId: null })]);
    const p = commit(t, 'p', [msg('a', 0, { newIndexFiles: [await hashFile(t, [5])] })]);
    await expect(p).rejects.toBeInstanceOf(DynamicBucketConflictError);
    // Another partition's hashes never collide.
    await commit(t, 'p', [msg('b', 0, { newIndexFiles: [await hashFile(t, [5])] })]);
    expect((await hashesByBucket(t, 'b')).get(0)).toEqual([5]);
  });

  it('an overwrite drops the index files of the replaced partitions and adds the new ones', async () => {
    const t = await pkTable();
    await commit(t, 'u', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: null }),
      msg('b', 0, { newIndexFiles: [await hashFile(t, [2])], indexBaseSnapshotId: null }),
    ]);
    const fresh = await hashFile(t, [9]);
    await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [msg('a', 2, { newIndexFiles: [fresh] })] },
      { commitUser: 'o' },
    );
    expect([...(await hashesByBucket(t, 'a')).entries()]).toEqual([[2, [9]]]);
    expect([...(await hashesByBucket(t, 'b')).entries()]).toEqual([[0, [2]]]);
  });

  it('an overwrite of the partition after the base makes every later commit planned on that base re-plan, even without new keys', async () => {
    const t = await pkTable();
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 2])], indexBaseSnapshotId: null })]);
    // The overwrite re-assigned key 1 to bucket 5 from an empty index: its hashes differ from the
    // old ones, which is no conflict for the overwrite itself.
    await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [msg('a', 5, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: 1 })] },
      { commitUser: 'o' },
    );
    expect([...(await hashesByBucket(t)).entries()]).toEqual([[5, [1]]]);
    // Planned on snapshot 1, this commit routed known key 1 to bucket 0 (no index change).
    const stale = commit(t, 'p', [msg('a', 0, { indexBaseSnapshotId: 1 })]);
    await expect(stale).rejects.toBeInstanceOf(DynamicBucketConflictError);
    await expect(stale).rejects.toThrow(/overwritten after its bucket assignment/);
    // Other partitions and later bases are unaffected.
    await commit(t, 'p', [msg('b', 0, { indexBaseSnapshotId: 1 })]);
    await commit(t, 'p', [msg('a', 5, { indexBaseSnapshotId: 2 })]);
    expect(await t.snapshots.latestId()).toBe(4);
  });

  it("a rollback deletes the index files written after the target and keeps the target's", async () => {
    const t = await pkTable();
    const first = await hashFile(t, [1]);
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [first], indexBaseSnapshotId: null })]);
    const second = await hashFile(t, [1, 2]);
    const other = await hashFile(t, [3]);
    await commit(t, 'u', [
      msg('a', 0, { newIndexFiles: [second], deletedIndexFiles: [first], indexBaseSnapshotId: 1 }),
      msg('a', 1, { newIndexFiles: [other], indexBaseSnapshotId: 1 }),
    ]);
    await rollbackTo(t.io, t.paths, 1);
    expect(await t.io.exists(t.paths.indexPath(first.fileName))).toBe(true);
    expect(await t.io.exists(t.paths.indexPath(second.fileName))).toBe(false);
    expect(await t.io.exists(t.paths.indexPath(other.fileName))).toBe(false);
    expect((await liveIndex(t)).map((e) => e.fileName)).toEqual([first.fileName]);
  });

  it('files of two writers in one commit: one bucket gets a union file, one new key in two buckets is refused', async () => {
    const t = await pkTable();
    // Already in the table's first commit.
    await commit(t, 'u', [
      msg('b', 0, { newIndexFiles: [await hashFile(t, [5])], indexBaseSnapshotId: null }),
      msg('b', 0, { newIndexFiles: [await hashFile(t, [6])], indexBaseSnapshotId: null }),
    ]);
    expect([...(await hashesByBucket(t, 'b')).entries()]).toEqual([[0, [5, 6]]]);
    await commit(t, 'u', [msg('a', 0, { newIndexFiles: [await hashFile(t, [1])], indexBaseSnapshotId: 1 })]);
    const base = (await liveIndex(t)).find((e) => Buffer.from(e.partition).equals(Buffer.from(partitionBytes('a'))))!;
    await commit(t, 'u', [
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 10])], deletedIndexFiles: [base], indexBaseSnapshotId: 2 }),
      msg('a', 0, { newIndexFiles: [await hashFile(t, [1, 20])], deletedIndexFiles: [base], indexBaseSnapshotId: 2 }),
    ]);
    expect([...(await hashesByBucket(t)).entries()]).toEqual([[0, [1, 10, 20]]]);
    const p = commit(t, 'u', [
      msg('a', 1, { newIndexFiles: [await hashFile(t, [30])], indexBaseSnapshotId: 3 }),
      msg('a', 2, { newIndexFiles: [await hashFile(t, [30])], indexBaseSnapshotId: 3 }),
    ]);
    await expect(p).rejects.toBeInstanceOf(DynamicBucketConflictError);
  });

  it('index files a long-lived writer committed earlier are not read again at its next commit', async () => {
    const t = await pkTable();
    const writer = { uuid: randomUUID(), n: 0 };
    const first = await hashFile(t, [1], writer);
    await commit(t, 'w', [msg('a', 0, { newIndexFiles: [first], indexBaseSnapshotId: null })]);
    // The same writer, still planning against the empty table, fills bucket 1 next. Its own
    // earlier file holds nothing it did not place itself: removing it from storage shows it is
    // not read.
    await t.io.delete(t.paths.indexPath(first.fileName));
    await commit(t, 'w', [msg('a', 1, { newIndexFiles: [await hashFile(t, [2], writer)], indexBaseSnapshotId: null })]);
    expect((await liveIndex(t)).map((e) => e.bucket).sort()).toEqual([0, 1]);
  });
});
