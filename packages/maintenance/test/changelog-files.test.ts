import { describe, expect, it } from 'vitest';
import { readManifestEntries, readManifestList } from '@tidemark/format';
import type { Table } from '@tidemark/core';
import { expireSnapshots, removeOrphanFiles } from '../src/index.js';
import { createPkTable } from './pk-helpers.js';

/** Every file a snapshot's changelog references: its list, manifests and changelog data files. */
async function changelogFilesOf(t: Table, id: number): Promise<string[]> {
  const s = await t.snapshotManager.snapshot(id);
  if (!s.changelogManifestList) return [];
  const out = [t.paths.manifestPath(s.changelogManifestList)];
  for (const m of await readManifestList(t.fileIO, t.paths.manifestPath(s.changelogManifestList))) {
    out.push(t.paths.manifestPath(m.fileName));
    for await (const e of readManifestEntries(t.fileIO, t.paths.manifestPath(m.fileName))) {
      out.push(t.paths.dataFilePath(e.partition, e.bucket, e.file.fileName));
    }
  }
  return out;
}

async function existing(t: Table, paths: readonly string[]): Promise<boolean[]> {
  return Promise.all(paths.map((p) => t.fileIO.exists(p)));
}

describe('changelog files in maintenance', () => {
  it('orphan cleanup keeps live changelog files and manifests; expiration deletes those of expired snapshots only', async () => {
    const t = await createPkTable({ 'changelog-producer': 'input' });
    for (let i = 0; i < 4; i++) {
      await t.append([
        { k: i % 2, dt: 'd', a: BigInt(i), s: `v${i}` },
        { k: 10 + i, dt: 'e', a: null, s: null },
      ]);
    }
    const per = await Promise.all([1, 2, 3, 4].map((id) => changelogFilesOf(t, id)));
    for (const files of per) expect(files.length).toBeGreaterThanOrEqual(4);
    expect(per.flat().some((p) => /\/changelog-[^/]+\.parquet$/.test(p))).toBe(true);

    // Every file counts as old: only references protect them.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const r = await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0, dryRun: true });
    expect(r.deleted).toEqual([]);
    await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
    for (const files of per) expect(await existing(t, files)).toEqual(files.map(() => true));

    const e = await expireSnapshots(t, { retainMin: 2, olderThanMs: Date.now() + 60_000 });
    expect(e.snapshotsExpired).toBe(2);
    expect(e.earliestSnapshotId).toBe(3);
    for (const files of per.slice(0, 2)) expect(await existing(t, files)).toEqual(files.map(() => false));
    for (const files of per.slice(2)) expect(await existing(t, files)).toEqual(files.map(() => true));

    await new Promise((resolve) => setTimeout(resolve, 30));
    const r2 = await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
    expect(r2.filesDeleted).toBe(0);
    for (const files of per.slice(2)) expect(await existing(t, files)).toEqual(files.map(() => true));
  });

  it('a longer changelog retention keeps the changelog (not the snapshots) longer, in changelog/', async () => {
    const t = await createPkTable({
      'changelog-producer': 'input',
      'snapshot.num-retained.min': '1',
      'changelog.num-retained.min': '3',
      'changelog.time-retained': '1 d',
    });
    for (let i = 0; i < 5; i++) await t.append([{ k: i, dt: 'd', a: BigInt(i), s: null }]);
    const per = await Promise.all([1, 2, 3, 4, 5].map((id) => changelogFilesOf(t, id)));
    const later = Date.now() + 3_600_000;
    // The snapshot settings decide for the snapshots; their changelog is kept as changelog-<id>.
    const r = await expireSnapshots(t, { olderThanMs: later, now: () => later });
    expect(r.snapshotsExpired).toBe(4);
    expect(r.changelogsExpired).toBe(0);
    for (const id of [1, 2, 3, 4]) {
      const kept = JSON.parse(new TextDecoder().decode(await t.fileIO.read(t.paths.changelogMetaPath(id)))) as Record<string, unknown>;
      expect(kept.id).toBe(id);
      expect(await t.fileIO.exists(t.paths.snapshotPath(id))).toBe(false);
      expect(t.paths.manifestPath(kept.changelogManifestList as string)).toBe(per[id - 1]![0]);
    }
    for (const files of per) expect(await existing(t, files)).toEqual(files.map(() => true));
    // A day later the changelog beyond changelog.num-retained.min (3, counted with the snapshot) goes.
    const dayLater = Date.now() + 2 * 86_400_000;
    const r2 = await expireSnapshots(t, { olderThanMs: dayLater, now: () => dayLater });
    expect(r2.changelogsExpired).toBe(2);
    for (const files of per.slice(0, 2)) expect(await existing(t, files)).toEqual(files.map(() => false));
    for (const files of per.slice(2)) expect(await existing(t, files)).toEqual(files.map(() => true));
    expect(await t.fileIO.exists(t.paths.changelogMetaPath(2))).toBe(false);
    expect(await t.fileIO.exists(t.paths.changelogMetaPath(3))).toBe(true);
  });
});
