/**
 * Jobs that delete files on one branch keep what another branch still reads: rollback, snapshot
 * expiration and changelog expiration on main after a branch was made from a tag, and on the
 * branch past its fork.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList } from '@tidemark/format';
import {
  ChangelogManager,
  DataFileLocator,
  FileSystemCatalog,
  SnapshotManager,
  Table,
  expireChangelogs,
  expireSnapshots,
} from '../src/index.js';

let n = 0;

async function setup(extraOptions: Record<string, string> = {}): Promise<{ io: FileIO; loc: string }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://branch-shared-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    // Writers compact at every commit: later snapshots delete the files of earlier ones.
    options: { bucket: '1', 'full-compaction.delta-commits': '1', ...extraOptions },
  });
  return { io, loc: catalog.tableLocation('db.t') };
}

async function rows(t: Table): Promise<unknown[]> {
  return (await t.newRead().toArrowTable()).toArray().map((r) => r.toJSON());
}

/** Reads every snapshot and tag of `branch`: throws naming the one whose files are gone. */
async function allRead(io: FileIO, loc: string, branch: string): Promise<number> {
  const t = await Table.open(loc, { fileIO: io, branch });
  let n = 0;
  for (const id of await t.snapshotManager.sortedIds()) {
    await t
      .newRead({ snapshotId: id })
      .toArrowTable()
      .catch((e: Error) => {
        throw new Error(`snapshot ${id} of ${branch}: ${e.message}`);
      });
    n++;
  }
  for (const { name } of await t.listTags()) {
    await t.newRead({ tag: name }).toArrowTable();
    n++;
  }
  return n;
}

/** Expires everything but the latest snapshot of `t`. */
function expireAllButLatest(t: Table): ReturnType<typeof expireSnapshots> {
  return expireSnapshots(t, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1 });
}

/**
 * `setup(extraOptions)`, then main appends each of `rows` (one commit each, no expiration), tags
 * the result `tag` and branch `dev` is made from the tag.
 */
async function forkedAt(
  tag: string,
  rows: ReadonlyArray<{ id: number; v: string }>,
  extraOptions: Record<string, string> = {},
): Promise<{ io: FileIO; loc: string; main: Table; dev: Table }> {
  const { io, loc } = await setup(extraOptions);
  const main = await Table.open(loc, { fileIO: io });
  for (const r of rows) await main.append([r], { expire: false });
  await main.createTag(tag);
  await main.branches().create('dev', { tag });
  return { io, loc, main, dev: await Table.open(loc, { fileIO: io, branch: 'dev' }) };
}

/** Every object under the table, to compare before and after. */
async function objects(io: FileIO, loc: string): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const st of io.list(loc)) out.add(st.path);
  return out;
}

describe('files shared by branches', () => {
  it("main's rollback past the tag a branch was made from keeps the branch's files", async () => {
    const { io, loc, main, dev } = await forkedAt('t2', [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    const devRows = await rows(dev);
    expect(devRows).toHaveLength(2);
    // Snapshots 2-4 (each append is followed by a compaction) go; of the two files they added,
    // Java would also delete the compacted one the branch reads.
    const r = await main.rollbackTo(1, { force: true });
    expect(r).toMatchObject({ removedSnapshots: [4, 3, 2], removedTags: ['t2'], deletedDataFiles: 1 });
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([{ id: 1, v: 'a' }]);
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toEqual(devRows);
  });

  it("a branch's rollback deletes what only the branch wrote", async () => {
    const { io, loc, dev } = await forkedAt('t1', [{ id: 1, v: 'a' }]);
    const before = await objects(io, loc);
    await dev.append([{ id: 1, v: 'A' }], { expire: false });
    const r = await dev.rollbackTo('t1');
    expect(r.deletedDataFiles).toBeGreaterThan(0);
    const after = await objects(io, loc);
    // Every file main had is still there; what the branch wrote is gone again.
    for (const p of before) expect(after.has(p), p).toBe(true);
    expect([...after].filter((p) => p.endsWith('.parquet') && !before.has(p))).toEqual([]);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([{ id: 1, v: 'a' }]);
  });

  it("main's snapshot expiration past the tag a branch was made from keeps the branch's files", async () => {
    const { io, loc, main, dev } = await forkedAt('t', [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    await dev.append([{ id: 3, v: 'c' }], { expire: false });
    const devRows = await rows(dev);
    await main.append([{ id: 2, v: 'B' }], { expire: false });
    await main.deleteTag('t');
    // Main's snapshots up to the fork go: the branch's copy of the tagged snapshot names their
    // manifest lists, and the compacted file the fork reads was deleted by a later main snapshot.
    const r = await expireAllButLatest(main);
    expect(r.snapshotsExpired).toBeGreaterThanOrEqual(3);
    expect(r.filesDeleted).toBeGreaterThan(r.snapshotsExpired); // main's own files still go
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toEqual(devRows);
    expect(await allRead(io, loc, 'dev')).toBe((await dev.snapshotManager.sortedIds()).length + 1);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'B' },
    ]);
  });

  it("a branch's snapshot expiration past its fork keeps main's files", async () => {
    const { io, loc, main, dev } = await forkedAt('t', [{ id: 1, v: 'a' }]);
    await dev.append([{ id: 1, v: 'A' }], { expire: false });
    await dev.append([{ id: 2, v: 'b' }], { expire: false });
    await dev.deleteTag('t');
    const before = await objects(io, loc);
    const r = await expireAllButLatest(dev);
    expect(r.snapshotsExpired).toBeGreaterThanOrEqual(3);
    // The branch's own replaced files went; every file main's snapshots and tag read stayed.
    const after = await objects(io, loc);
    expect([...before].filter((p) => !after.has(p) && p.endsWith('.parquet')).length).toBeGreaterThan(0);
    expect(await allRead(io, loc, 'main')).toBe((await main.snapshotManager.sortedIds()).length + 1);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([{ id: 1, v: 'a' }]);
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toEqual([
      { id: 1, v: 'A' },
      { id: 2, v: 'b' },
    ]);
  });

  it('changelog expiration on main keeps the changelog of the snapshot a branch was made from', async () => {
    // The changelog outlives the snapshots (decoupled): expiration keeps changelog-<id> files.
    const rows3 = [1, 2, 3].map((i) => ({ id: i, v: String(i) }));
    const { io, loc, main } = await forkedAt('t', rows3, {
      'changelog-producer': 'input',
      'changelog.time-retained': '100d',
      'full-compaction.delta-commits': '100',
    });
    await main.append([{ id: 4, v: '4' }], { expire: false });
    await main.deleteTag('t');
    expect((await expireAllButLatest(main)).snapshotsExpired).toBe(3);
    const changelogs = new ChangelogManager(io, main.paths);
    expect(await changelogs.earliestId()).toBe(1);
    const r = await expireChangelogs(main, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1 });
    expect(r.changelogsExpired).toBe(3);
    expect(r.filesDeleted).toBeGreaterThan(3); // changelogs 1 and 2 took their files along
    // The branch's snapshot 3 is main's old snapshot 3: its changelog manifest list and files stay.
    const fork = await new SnapshotManager(io, (await Table.open(loc, { fileIO: io, branch: 'dev' })).paths).snapshot(3);
    expect(fork.changelogManifestList).toBeTruthy();
    expect(await io.exists(main.paths.manifestPath(fork.changelogManifestList!))).toBe(true);
    const locator = new DataFileLocator(main.paths, main.schema());
    let files = 0;
    for (const m of await readManifestList(io, main.paths.manifestPath(fork.changelogManifestList!))) {
      for await (const e of readManifestEntries(io, main.paths.manifestPath(m.fileName))) {
        expect(await io.exists(locator.dataFile(e)), locator.dataFile(e)).toBe(true);
        files++;
      }
    }
    expect(files).toBe(1);
  });

  it('after a fast-forward, expiring either side keeps the snapshots both now share', async () => {
    const { io, loc, main, dev } = await forkedAt('t', [{ id: 1, v: 'a' }]);
    await dev.append([{ id: 2, v: 'b' }], { expire: false });
    await dev.append([{ id: 1, v: 'A' }], { expire: false });
    await main.branches().fastForward('dev');
    const ff = await Table.open(loc, { fileIO: io });
    await ff.append([{ id: 3, v: 'c' }], { expire: false });
    await ff.deleteTag('t');
    await dev.deleteTag('t');
    const devRows = await rows(dev);
    expect((await expireAllButLatest(ff)).snapshotsExpired).toBeGreaterThan(0);
    expect(await allRead(io, loc, 'dev')).toBe((await dev.snapshotManager.sortedIds()).length);
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toEqual(devRows);
    expect((await expireAllButLatest(dev)).snapshotsExpired).toBeGreaterThan(0);
    expect(await allRead(io, loc, 'main')).toBe(1);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([...devRows, { id: 3, v: 'c' }]);
  });
});
