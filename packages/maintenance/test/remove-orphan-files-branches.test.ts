/**
 * Orphan cleanup of a table with branches: whichever branch the table was opened on (the CLI's
 * `maintain --branch`), every snapshot, tag and long-lived changelog of every branch keeps its
 * files, and what no branch reads any more goes.
 */
import { describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '@tidemark/storage';
import { ChangelogManager, FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { expireSnapshots, removeOrphanFiles, verifyTable } from '../src/index.js';
import { allFiles, createTestTable, type TestTable } from './helpers.js';

/** Reads every snapshot and tag of every branch of `t`; throws naming the one whose files are gone. */
async function everythingReads(t: TestTable): Promise<number> {
  const main = await t.open();
  let reads = 0;
  for (const branch of ['main', ...(await main.branches().names())]) {
    const b: Table = await openTable(t.location, { fileIO: t.io, branch });
    const targets = [
      ...(await b.snapshotManager.sortedIds()).map((snapshotId) => ({ what: `snapshot ${snapshotId}`, at: { snapshotId } })),
      ...(await b.listTags()).map(({ name }) => ({ what: `tag '${name}'`, at: { tag: name } })),
    ];
    for (const { what, at } of targets) {
      await b
        .newRead(at)
        .toArrowTable()
        .catch((e: Error) => {
          throw new Error(`${what} of branch '${branch}': ${e.message}`);
        });
      reads++;
    }
  }
  return reads;
}

/** Orphan cleanup of everything older than now, as `--older-than 0` does. */
function cleanAll(table: Table, expiringSnapshotWaitMs?: number): ReturnType<typeof removeOrphanFiles> {
  const now = Date.now() + 1000;
  return removeOrphanFiles(table, {
    olderThanMs: now,
    inProgressGraceMs: 0,
    now: () => now,
    ...(expiringSnapshotWaitMs !== undefined ? { expiringSnapshotWaitMs } : {}),
  });
}

/**
 * A primary-key table whose commits write hash index files (dynamic buckets) and whose changelog
 * outlives the snapshots (kept as `changelog/changelog-<id>` by snapshot expiration).
 */
async function indexedChangelogTable(): Promise<{ io: LocalFileIO; location: string; main: Table }> {
  const io = new LocalFileIO();
  const catalog = new FileSystemCatalog(await mkdtemp(join(tmpdir(), 'tidemark-orphans-branches-')), { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    options: { bucket: '-1', 'changelog-producer': 'input', 'changelog.time-retained': '100d' },
  });
  const location = catalog.tableLocation('db.t');
  return { io, location, main: await openTable(location, { fileIO: io }) };
}

describe('removeOrphanFiles with long-lived changelogs', () => {
  it('does not wait for the index manifest of an expired snapshot that a long-lived changelog names', async () => {
    const { main } = await indexedChangelogTable();
    for (let i = 1; i <= 3; i++) await main.append([{ id: i, v: String(i) }], { expire: false });
    expect((await expireSnapshots(main, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 })).snapshotsExpired).toBe(2);
    const c = (await new ChangelogManager(main.fileIO, main.paths).tryGet(1))!;
    // Expiration deleted the index manifest with the snapshot (Java keeps only the changelog list).
    expect(c.indexManifest).toBeTruthy();
    expect(await main.fileIO.exists(main.paths.manifestPath(c.indexManifest!))).toBe(false);
    const r = await cleanAll(main, 0);
    expect(r.filesDeleted).toBe(0);
    expect(await main.fileIO.exists(main.paths.manifestPath(c.changelogManifestList!))).toBe(true);
  });
});

describe('removeOrphanFiles with branches', () => {
  it.each(['main', 'dev'])('opened on %s, keeps the files of every branch and deletes the ones no branch reads', async (on) => {
    const t = await createTestTable();
    await t.append([1, 2]);
    await t.append([3]);
    const main = await t.open();
    await main.createTag('t1');
    await main.branches().create('dev', { tag: 't1' });
    const dev = await openTable(t.location, { fileIO: t.io, branch: 'dev' });
    // Each side replaces the fork's files with its own.
    await dev.overwrite([{ id: 10, p: 'a' }]);
    await t.overwrite([20]);
    // Neither side tags the fork any more: only the branch's copy of the snapshot keeps its files.
    await main.deleteTag('t1');
    await dev.deleteTag('t1');
    const before = await allFiles(t.io, t.location);
    const opened = on === 'main' ? main : dev;

    const kept = await cleanAll(opened);
    expect(kept.filesDeleted).toBe(0);
    expect(await allFiles(t.io, t.location)).toEqual(before);
    const reads = await everythingReads(t);
    expect(reads).toBe(3 + 2);

    // Once the branch is gone, its data file and metadata are orphans; main's are not.
    await main.branches().delete('dev');
    const cleaned = await cleanAll(opened === dev ? main : opened);
    expect(cleaned.filesDeleted).toBeGreaterThan(0);
    const after = await allFiles(t.io, t.location);
    expect(after.filter((p) => p.endsWith('.parquet'))).toHaveLength(
      before.filter((p) => p.endsWith('.parquet')).length - 1, // the branch's one data file
    );
    expect(await everythingReads(t)).toBe(3);
  });

  it("keeps a branch's hash index files and long-lived changelogs, and deletes them once the branch is deleted", async () => {
    const { io, location, main } = await indexedChangelogTable();
    await main.append([{ id: 1, v: 'a' }], { expire: false });
    await main.branches().create('dev');
    const dev = await openTable(location, { fileIO: io, branch: 'dev' });
    for (let i = 2; i <= 4; i++) await dev.append([{ id: i, v: String(i) }], { expire: false });
    const expired = await expireSnapshots(dev, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 });
    expect(expired.snapshotsExpired).toBe(2);
    const devChangelogs = new ChangelogManager(io, dev.paths);
    expect([await devChangelogs.earliestId(), await devChangelogs.latestId()]).toEqual([1, 2]);
    const t = { io, location, open: () => openTable(location, { fileIO: io }) } as unknown as TestTable;
    const index = async (): Promise<string[]> => (await allFiles(io, location)).filter((p) => p.includes('/index/'));
    const changelogFiles = async (): Promise<string[]> =>
      (await allFiles(io, location)).filter((p) => /\/changelog-[^/]+\.parquet$/.test(p));
    const before = await allFiles(io, location);
    expect((await index()).length).toBeGreaterThan(1);
    expect((await changelogFiles()).length).toBe(4);

    expect((await cleanAll(main)).filesDeleted).toBe(0);
    expect(await allFiles(io, location)).toEqual(before);
    expect((await verifyTable(dev)).problems).toEqual([]);
    expect(await everythingReads(t)).toBe(2);
    // The branch's long-lived changelogs still read: their manifests are there.
    for (const id of [1, 2]) {
      const c = (await devChangelogs.tryGet(id))!;
      expect(await io.exists(dev.paths.manifestPath(c.changelogManifestList!))).toBe(true);
    }

    await main.branches().delete('dev');
    expect((await cleanAll(main)).filesDeleted).toBeGreaterThan(0);
    // Main keeps its one index file and its one changelog file; the branch's are gone.
    expect(await index()).toHaveLength(1);
    expect(await changelogFiles()).toHaveLength(1);
    expect(await everythingReads(t)).toBe(1);
  });
});
