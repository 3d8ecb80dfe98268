/**
 * Orphan cleanup racing snapshot expiration. Expiration deletes a snapshot's manifest lists and
 * manifests before the snapshot file itself, so a cleanup can find a snapshot whose files are gone
 * while the snapshot still exists. That is an ordinary race: the cleanup waits for the snapshot to
 * go (or to fall below EARLIEST) and carries on from the snapshots that remain, deleting nothing a
 * remaining snapshot needs. A snapshot that stays with files missing is damage or a stuck
 * expiration: the run stops before deleting anything, with a user-level error saying both.
 */
import { describe, expect, it } from 'vitest';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import { SnapshotManager } from '@tidemark/core';
import { expireSnapshots, OrphanCleanupStoppedError, removeOrphanFiles } from '../src/index.js';
import { createTestTable, readIds } from './helpers.js';

/** `io` with `method` replaced by `replacement(original, ...args)`. */
function intercept<K extends 'write' | 'exists'>(
  io: FileIO,
  method: K,
  replacement: (original: FileIO[K], ...args: Parameters<FileIO[K]>) => ReturnType<FileIO[K]>,
): FileIO {
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === method) {
        const original = (target[method] as (...a: unknown[]) => unknown).bind(target) as FileIO[K];
        return (...args: Parameters<FileIO[K]>) => replacement(original, ...args);
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('removeOrphanFiles while snapshots expire', () => {
  it('waits for a snapshot whose files expiration already deleted, then goes on; deletes only orphans', async () => {
    const io = new LocalFileIO();
    const t = await createTestTable({ io });
    for (const id of [1, 2, 3]) await t.append([id]);
    const orphan = `${t.location}/bucket-0/data-orphan-0.parquet`;
    await io.write(orphan, 'x');

    // Expiration stops right before it moves EARLIEST and deletes the snapshot files (its step 4):
    // snapshots 1 and 2 still exist, their manifest lists are gone.
    let atSnapshotFiles!: () => void;
    const reachedSnapshotFiles = new Promise<void>((r) => (atSnapshotFiles = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const expiringIo = intercept(io, 'write', async (write, path, data) => {
      if (path === t.paths.earliestHint) {
        atSnapshotFiles();
        await released;
      }
      return write(path, data);
    });
    const expiring = expireSnapshots({ ...t, fileIO: expiringIo }, { retainMin: 1, retainMax: 1 });
    await reachedSnapshotFiles;

    // The cleanup's first look at whether such a snapshot still exists lets expiration finish.
    let looked = false;
    const cleaningIo = intercept(io, 'exists', async (exists, path) => {
      const there = await exists(path);
      if (!looked && /\/snapshot\/snapshot-\d+$/.test(path)) {
        looked = true;
        release();
      }
      return there;
    });
    const summary = await removeOrphanFiles({ ...t, fileIO: cleaningIo }, { olderThanMs: Date.now() });
    expect(looked).toBe(true);
    expect(await expiring).toMatchObject({ snapshotsExpired: 2, earliestSnapshotId: 3 });
    expect(await new SnapshotManager(io, t.paths).sortedIds()).toEqual([3]);
    expect(await io.exists(orphan)).toBe(false);
    expect(summary.filesDeleted).toBeGreaterThanOrEqual(1);
    expect(await readIds(await t.open(), {})).toEqual([1, 2, 3]);
  });

  it('stops before deleting anything when a snapshot stays with a manifest list missing, naming both causes', async () => {
    const io = new LocalFileIO();
    const t = await createTestTable({ io });
    for (const id of [1, 2, 3]) await t.append([id]);
    const orphan = `${t.location}/bucket-0/data-orphan-0.parquet`;
    await io.write(orphan, 'x');
    const s2 = await new SnapshotManager(io, t.paths).snapshot(2);
    await io.delete(t.paths.manifestPath(s2.deltaManifestList));

    const run = removeOrphanFiles(t, { olderThanMs: Date.now(), expiringSnapshotWaitMs: 200 });
    await expect(run).rejects.toBeInstanceOf(OrphanCleanupStoppedError);
    await expect(run).rejects.toThrow(
      /snapshot 2 of main .* references 'manifest-list-[^']+', which cannot be read, and the snapshot is still there: .*expire-snapshots .*run remove-orphan-files again .*tidemark verify/,
    );
    await expect(run).rejects.toMatchObject({ userError: true });
    expect(await io.exists(orphan)).toBe(true);
  });
});
