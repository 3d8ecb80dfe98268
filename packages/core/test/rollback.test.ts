import { describe, expect, it } from 'vitest';
import { readManifestEntries } from '@tidemark/format';
import { dataManifests } from '../src/commit/manifest-fold.js';
import { rollbackTo } from '../src/rollback.js';
import { createTag, listTags } from '../src/tags.js';
import { createTestTable, dataFile, liveFileNames, message, type TestTable } from './commit-helpers.js';

/** Commits one file per snapshot and creates the data file objects so that deletion is observable. */
async function tableWith(n: number): Promise<{ t: TestTable; files: string[]; paths: string[] }> {
  const t = await createTestTable();
  const files: string[] = [];
  const paths: string[] = [];
  for (let i = 1; i <= n; i++) {
    const f = dataFile(i);
    const p = t.paths.dataFilePath('dt=a/', 0, f.fileName);
    await t.io.write(p, 'parquet bytes');
    files.push(f.fileName);
    paths.push(p);
    await t.commit.commit({ identifier: BigInt(i), messages: [message('a', { newFiles: [f] })] }, { commitUser: 'u' });
  }
  return { t, files, paths };
}

async function manifestNames(t: TestTable): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const st of t.io.list(t.paths.manifestDir)) out.add(st.path.slice(st.path.lastIndexOf('/') + 1));
  return out;
}

describe('rollbackTo', () => {
  it('removes later snapshots newest first and the files only they used', async () => {
    const { t, files, paths } = await tableWith(4);
    const target = await t.snapshots.snapshot(2);
    const r = await rollbackTo(t.io, t.paths, 2);
    expect(r).toMatchObject({ snapshotId: 2, removedSnapshots: [4, 3], removedTags: [], deletedDataFiles: 2 });
    expect(await t.snapshots.sortedIds()).toEqual([1, 2]);
    expect(await t.snapshots.latestId()).toBe(2);
    expect(new TextDecoder().decode(await t.io.read(t.paths.latestHint))).toBe('2');
    expect(await liveFileNames(t)).toEqual(files.slice(0, 2).sort());
    expect(await Promise.all(paths.map((p) => t.io.exists(p)))).toEqual([true, true, false, false]);
    // Every manifest the target (and snapshot 1) uses is still there and readable.
    const left = await manifestNames(t);
    for (const id of [1, 2]) {
      const s = await t.snapshots.snapshot(id);
      expect(left.has(s.baseManifestList) && left.has(s.deltaManifestList)).toBe(true);
      for (const m of await dataManifests(t.io, t.paths, s)) {
        expect(left.has(m.fileName)).toBe(true);
        for await (const _ of readManifestEntries(t.io, t.paths.manifestPath(m.fileName))) void _;
      }
    }
    expect(target.id).toBe(2);
    // Commits continue from the target.
    const next = await t.commit.commit({ identifier: 10n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u2' });
    expect(next).toMatchObject({ snapshotId: 3 });
  });

  it('dry run: reports what the rollback removes and deletes, and changes nothing', async () => {
    const { t, paths } = await tableWith(4);
    await createTag(t.io, t.paths, 'four', { snapshotId: 4 });
    const everything = async (): Promise<Map<string, string>> => {
      const out = new Map<string, string>();
      for await (const st of t.io.list(t.paths.root, { recursive: true }))
        out.set(st.path, new TextDecoder().decode(await t.io.read(st.path)));
      return out;
    };
    const before = await everything();
    const dry = await rollbackTo(t.io, t.paths, 2, { force: true, dryRun: true });
    expect(await everything()).toEqual(before);
    expect(await t.snapshots.sortedIds()).toEqual([1, 2, 3, 4]);
    expect(await Promise.all(paths.map((p) => t.io.exists(p)))).toEqual([true, true, true, true]);
    // The real rollback then does exactly what the dry run said.
    const real = await rollbackTo(t.io, t.paths, 2, { force: true });
    expect(dry).toEqual({ ...real, dryRun: true });
    expect(real).toMatchObject({ snapshotId: 2, removedSnapshots: [4, 3], removedTags: ['four'], deletedDataFiles: 2, dryRun: false });
    expect(real.deletedManifests).toBeGreaterThan(0);
  });

  it('refuses while a tag points at a later snapshot unless forced, and rolls back to a tag', async () => {
    const { t } = await tableWith(4);
    await createTag(t.io, t.paths, 'two', { snapshotId: 2 });
    await createTag(t.io, t.paths, 'four', { snapshotId: 4 });
    await expect(rollbackTo(t.io, t.paths, 'two')).rejects.toThrow(/tag\(s\) 'four' \(snapshot 4\) point at later snapshots/);
    expect(await t.snapshots.latestId()).toBe(4);
    const r = await rollbackTo(t.io, t.paths, 'two', { force: true });
    expect(r).toMatchObject({ snapshotId: 2, removedTags: ['four'] });
    expect((await listTags(t.io, t.paths)).map((x) => x.name)).toEqual(['two']);
    expect(await t.snapshots.latestId()).toBe(2);
  });

  it('keeps data files that a later compaction deleted (they are live in the target)', async () => {
    const { t, files, paths } = await tableWith(2);
    const merged = dataFile(3);
    const mergedPath = t.paths.dataFilePath('dt=a/', 0, merged.fileName);
    await t.io.write(mergedPath, 'x');
    const live = await t.snapshots.latest();
    const entries = [];
    for (const m of await dataManifests(t.io, t.paths, live!))
      for await (const e of readManifestEntries(t.io, t.paths.manifestPath(m.fileName))) entries.push(e.file);
    await t.commit.commit(
      { identifier: 3n, messages: [message('a', { compactBefore: entries, compactAfter: [merged] })] },
      { commitUser: 'u' },
    );
    expect(await liveFileNames(t)).toEqual([merged.fileName]);
    await rollbackTo(t.io, t.paths, 2);
    expect(await liveFileNames(t)).toEqual(files.slice().sort());
    expect(await Promise.all(paths.map((p) => t.io.exists(p)))).toEqual([true, true]);
    expect(await t.io.exists(mergedPath)).toBe(false);
  });

  it('deletes the extra files (sidecars) of removed data files, next to them in their bucket', async () => {
    const { t, paths } = await tableWith(1);
    const f = { ...dataFile(2), extraFiles: ['sidecar-x.index'] };
    const p = t.paths.dataFilePath('dt=a/', 0, f.fileName);
    const sidecar = t.paths.dataFilePath('dt=a/', 0, 'sidecar-x.index');
    await t.io.write(p, 'parquet bytes');
    await t.io.write(sidecar, 'index bytes');
    await t.commit.commit({ identifier: 2n, messages: [message('a', { newFiles: [f] })] }, { commitUser: 'u' });
    const r = await rollbackTo(t.io, t.paths, 1);
    expect(r).toMatchObject({ snapshotId: 1, removedSnapshots: [2], deletedDataFiles: 2 });
    expect(await t.io.exists(p)).toBe(false);
    expect(await t.io.exists(sidecar)).toBe(false);
    expect(await t.io.exists(paths[0]!)).toBe(true);
  });

  it('names the available range for a missing target', async () => {
    const { t } = await tableWith(2);
    await expect(rollbackTo(t.io, t.paths, 7)).rejects.toThrow(/snapshot 7 does not exist; earliest is 1, latest is 2/);
  });
});
