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
      await t.append([{ k: i % 2, dt: 'd', a: BigInt(i), s: `v${i}` }, { k: 10 + i, dt: 'e', a: null, s: null }]);
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
});
