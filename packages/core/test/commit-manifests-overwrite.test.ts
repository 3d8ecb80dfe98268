import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type CreateResult } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER, readManifestEntries, readManifestList } from '@tidemark/format';
import { FileStoreCommit } from '../src/commit/file-store-commit.js';
import { dataManifests } from '../src/commit/manifest-fold.js';
import { createTestTable, dataFile, liveFileNames, liveRowCount, message } from './commit-helpers.js';

describe('FileStoreCommit: manifest merging', () => {
  it('minor compaction merges small manifests once manifest.merge-min-count is reached', async () => {
    const t = await createTestTable();
    const names: string[] = [];
    const counts: number[] = [];
    for (let i = 0; i < 35; i++) {
      const f = dataFile(1);
      names.push(f.fileName);
      await t.commit.commit({ identifier: BigInt(i + 1), messages: [message(`p${i % 3}`, { newFiles: [f] })] }, { commitUser: 'u' });
      counts.push((await dataManifests(t.io, t.paths, (await t.snapshots.latest())!)).length);
    }
    // Without merging the latest snapshot would reference 35 manifests (one delta manifest per commit).
    expect(Math.max(...counts)).toBeLessThanOrEqual(30);
    expect(counts[counts.length - 1]).toBeLessThan(35);
    expect(await liveFileNames(t)).toEqual(names.sort());
    expect(await liveRowCount(t)).toBe(35);
  });

  it('full compaction rewrites manifests so that no DELETE entries remain in the base', async () => {
    // Tiny thresholds force a full compaction on every commit.
    const t = await createTestTable({
      options: { 'manifest.full-compaction-threshold-size': '1 b', 'manifest.target-file-size': '64 kb' },
    });
    const a = dataFile(2);
    const b = dataFile(3);
    await t.commit.commit(
      { identifier: 1n, messages: [message('p', { newFiles: [a] }), message('q', { newFiles: [b] })] },
      { commitUser: 'u' },
    );
    const c = dataFile(5);
    await t.commit.commit({ identifier: 2n, messages: [message('p', { compactBefore: [a], compactAfter: [c] })] }, { commitUser: 'u' });
    await t.commit.commit({ identifier: 3n, messages: [message('q', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' });
    const s = (await t.snapshots.latest())!;
    const base = await readManifestList(t.io, t.paths.manifestPath(s.baseManifestList));
    const kinds: string[] = [];
    for (const m of base)
      for await (const e of readManifestEntries(t.io, t.paths.manifestPath(m.fileName))) kinds.push(`${e.kind}:${e.file.fileName}`);
    expect(kinds.filter((k) => k.startsWith('DELETE'))).toEqual([]);
    expect(kinds).not.toContain(`ADD:${a.fileName}`);
    expect(base.every((m) => m.numDeletedFiles === 0)).toBe(true);
    expect((await liveFileNames(t)).sort()).toContain(c.fileName);
    expect(await liveRowCount(t)).toBe(9);
    expect(s.totalRecordCount).toBe(9);
  });
});

describe('FileStoreCommit: overwrite', () => {
  async function seeded() {
    const t = await createTestTable();
    const files = { a: dataFile(1), b: dataFile(2), c: dataFile(4) };
    await t.commit.commit(
      {
        identifier: BATCH_COMMIT_IDENTIFIER,
        messages: [message('a', { newFiles: [files.a] }), message('b', { newFiles: [files.b] }), message('c', { newFiles: [files.c] })],
      },
      { commitUser: 'seed' },
    );
    return { t, files };
  }

  it('dynamic overwrite replaces only the partitions that receive new files', async () => {
    const { t, files } = await seeded();
    const nb = dataFile(10);
    const r = await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('b', { newFiles: [nb] })] },
      { commitUser: 'ow' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 2 });
    const s = await t.snapshots.snapshot(2);
    expect(s).toMatchObject({ commitKind: 'OVERWRITE', totalRecordCount: 15, deltaRecordCount: 8 });
    expect(await liveFileNames(t)).toEqual([files.a.fileName, nb.fileName, files.c.fileName].sort());
    // No new files: nothing deleted, no snapshot.
    expect(await t.commit.overwrite({ identifier: BATCH_COMMIT_IDENTIFIER, messages: [] }, { commitUser: 'ow2' })).toEqual({
      status: 'empty',
    });
    expect(await t.snapshots.latestId()).toBe(2);
  });

  it('static overwrite deletes everything matching the spec, or the whole table', async () => {
    const { t, files } = await seeded();
    const na = dataFile(7);
    await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [na] })] },
      { commitUser: 'o1', partition: { dt: 'a' } },
    );
    expect(await liveFileNames(t)).toEqual([na.fileName, files.b.fileName, files.c.fileName].sort());
    // Static spec with no new files truncates that partition.
    await t.commit.overwrite({ identifier: BATCH_COMMIT_IDENTIFIER, messages: [] }, { commitUser: 'o2', partition: { dt: 'c' } });
    expect(await liveFileNames(t)).toEqual([na.fileName, files.b.fileName].sort());
    // Whole table.
    const nz = dataFile(3);
    await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('z', { newFiles: [nz] })] },
      { commitUser: 'o3', dynamic: false },
    );
    expect(await liveFileNames(t)).toEqual([nz.fileName]);
    expect((await t.snapshots.latest())!.totalRecordCount).toBe(3);
    expect(await t.snapshots.sortedIds()).toEqual([1, 2, 3, 4]);
  });

  it('rejects new files outside the static partition and unknown spec keys', async () => {
    const { t } = await seeded();
    await expect(
      t.commit.overwrite(
        { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('b', { newFiles: [dataFile(1)] })] },
        { commitUser: 'o', partition: { dt: 'a' } },
      ),
    ).rejects.toThrow(/belongs to partition 'dt=b'/);
    await expect(
      t.commit.overwrite({ identifier: BATCH_COMMIT_IDENTIFIER, messages: [] }, { commitUser: 'o', partition: { nope: 'x' } }),
    ).rejects.toThrow(/not a partition key/);
    expect(await t.snapshots.latestId()).toBe(1);
  });

  it('recomputes the files to delete from the new latest snapshot after losing a race', async () => {
    let hook: (() => Promise<void>) | null = null;
    class RaceIO extends MemoryFileIO {
      override async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
        if (hook !== null && path.includes('/snapshot/snapshot-')) {
          const h = hook;
          hook = null;
          await h();
        }
        return super.createIfAbsent(path, data);
      }
    }
    const t = await createTestTable({ io: new RaceIO(), commit: { commitOptions: { minRetryWaitMs: 1, maxRetryWaitMs: 2 } } });
    const a = dataFile(1);
    const b = dataFile(2);
    await t.commit.commit(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [a] }), message('b', { newFiles: [b] })] },
      { commitUser: 'seed' },
    );
    const other = new FileStoreCommit(new MemoryFileIO(), t.paths, t.schema);
    const late = dataFile(5);
    hook = async () => {
      await other.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [late] })] }, { commitUser: 'other' });
    };
    const na = dataFile(9);
    const r = await t.commit.overwrite(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [na] })] },
      { commitUser: 'ow' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 3 });
    expect((await t.snapshots.snapshot(2)).commitUser).toBe('other');
    // The concurrently appended file in the overwritten partition is replaced too.
    expect(await liveFileNames(t)).toEqual([na.fileName, b.fileName].sort());
    expect((await t.snapshots.latest())!.totalRecordCount).toBe(11);
  });
});
