import { utimes } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { joinPath } from '@tidemark/storage';
import { SnapshotManager, TagManager, createTag, inflightRecordPath, recordInflightFiles, recordInflightPrefixes } from '@tidemark/core';
import { DataFileLocator, MaintenanceArgumentError, expireSnapshots, removeOrphanFiles } from '../src/index.js';
import { createTestTable, missingReferences, readIds, type TestTable } from './helpers.js';

const DAY = 86_400_000;

/** Writes `path` with a modification time `ageMs` in the past. */
async function writeOld(t: TestTable, rel: string, ageMs: number, content = 'x'): Promise<string> {
  const path = joinPath(t.location, rel);
  await t.io.write(path, content);
  const when = new Date(Date.now() - ageMs);
  await utimes(path, when, when);
  return path;
}

async function consistent(t: TestTable): Promise<string[]> {
  const locate = new DataFileLocator(t.paths, t.schema);
  const sm = new SnapshotManager(t.io, t.paths);
  const snaps = [];
  for (const id of await sm.sortedIds()) snaps.push(await sm.snapshot(id));
  for (const { tag } of await new TagManager(t.io, t.paths).list()) snaps.push(tag);
  return missingReferences(t, snaps, (e) => locate.dataFile(e));
}

describe('removeOrphanFiles', () => {
  it('deletes old unused files in known directories only and keeps every used file', async () => {
    const t = await createTestTable({ partitioned: true });
    await t.append([1, 2]);
    await t.append([3], 'b');
    await createTag(t.io, t.paths, 'keep');
    await t.overwrite([4]);
    const orphans = [
      await writeOld(t, 'p=a/bucket-0/data-orphan-0.parquet', 2 * DAY),
      await writeOld(t, 'manifest/manifest-orphan-0', 2 * DAY),
      await writeOld(t, 'index/index-orphan-0', 2 * DAY),
      await writeOld(t, 'snapshot/.snapshot-9.abc.tmp', 2 * DAY),
    ];
    const untouchable = [
      await writeOld(t, 'unknown/x.parquet', 2 * DAY),
      await writeOld(t, 'p=a/other/data-1.parquet', 2 * DAY),
      await writeOld(t, 'schema/.schema-5.tmp', 2 * DAY),
      await writeOld(t, 'tag/junk', 2 * DAY),
      await writeOld(t, 'inflight/notes.txt', 2 * DAY),
    ];
    const young = await writeOld(t, 'p=b/bucket-0/data-young-0.parquet', 60_000);
    const table = await t.open();
    const rowsBefore = await readIds(table, {});
    const tagRowsBefore = await readIds(table, { tag: 'keep' });

    const dry = await removeOrphanFiles(t, { dryRun: true });
    expect([...dry.deleted!].sort()).toEqual([...orphans].sort());
    expect(dry.bytesFreed).toBe(orphans.length); // each orphan holds one byte
    for (const p of orphans) expect(await t.io.exists(p)).toBe(true);
    // listDeleted: false gives the same figures without the path list, and still deletes nothing.
    const counted = await removeOrphanFiles(t, { dryRun: true, listDeleted: false });
    expect(counted.deleted).toBeUndefined();
    expect([counted.filesDeleted, counted.bytesFreed]).toEqual([dry.filesDeleted, dry.bytesFreed]);
    for (const p of orphans) expect(await t.io.exists(p)).toBe(true);

    const r = await removeOrphanFiles(t, {});
    expect(r.filesDeleted).toBe(orphans.length);
    for (const p of orphans) expect(await t.io.exists(p), p).toBe(false);
    for (const p of [...untouchable, young]) expect(await t.io.exists(p), p).toBe(true);
    expect(await consistent(t)).toEqual([]);
    expect(await readIds(table, {})).toEqual(rowsBefore);
    expect(await readIds(table, { tag: 'keep' })).toEqual(tagRowsBefore);

    // With olderThan = now the young orphan goes too, still nothing used.
    const r2 = await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
    expect(r2.filesDeleted).toBe(1);
    expect(await t.io.exists(young)).toBe(false);
    expect(await consistent(t)).toEqual([]);
  });

  it('keeps files listed in inflight/ even with olderThan = now, and drops stale records', async () => {
    const t = await createTestTable();
    await t.append([1]);
    const pending = await writeOld(t, 'bucket-0/data-pending-0.parquet', 2 * DAY);
    await recordInflightFiles(t.io, t.location, 'sink-user-7', ['bucket-0/data-pending-0.parquet']);
    const gone = 'bucket-0/data-gone-0.parquet';
    await recordInflightFiles(t.io, t.location, 'sink-user-1', [gone], { now: () => Date.now() - 8 * DAY });
    const old = new Date(Date.now() - 8 * DAY);
    await utimes(inflightRecordPath(t.location, 'sink-user-1'), old, old);
    // Old record whose file still exists uncommitted: kept.
    const kept = await writeOld(t, 'bucket-0/data-kept-0.parquet', 9 * DAY);
    await recordInflightFiles(t.io, t.location, 'sink-user-2', ['bucket-0/data-kept-0.parquet'], { now: () => Date.now() - 8 * DAY });
    await utimes(inflightRecordPath(t.location, 'sink-user-2'), old, old);

    const r = await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
    expect(await t.io.exists(pending)).toBe(true);
    expect(await t.io.exists(kept)).toBe(true);
    expect(await t.io.exists(inflightRecordPath(t.location, 'sink-user-7'))).toBe(true);
    expect(await t.io.exists(inflightRecordPath(t.location, 'sink-user-2'))).toBe(true);
    expect(await t.io.exists(inflightRecordPath(t.location, 'sink-user-1'))).toBe(false);
    expect(r.inflightRecordsDeleted).toBe(1);
    expect(await consistent(t)).toEqual([]);
  });

  it('keeps files whose name starts with a recorded prefix, and drops prefix records older than 7 days regardless', async () => {
    const t = await createTestTable({ partitioned: true });
    await t.append([1]);
    // A writer in progress: data files in two partitions and a manifest, all older than the threshold.
    const live = [
      await writeOld(t, 'p=a/bucket-0/data-live-uuid-0.parquet', 2 * DAY),
      await writeOld(t, 'p=b/bucket-0/data-live-uuid-1.parquet', 2 * DAY),
      await writeOld(t, 'manifest/manifest-live-commit-0', 2 * DAY),
    ];
    await recordInflightPrefixes(t.io, t.location, 'write-live-uuid', ['data-live-uuid-']);
    await recordInflightPrefixes(t.io, t.location, 'commit-live-commit', ['manifest-live-commit-', 'manifest-list-live-commit-']);
    // Same shape without a record: deleted.
    const orphan = await writeOld(t, 'p=a/bucket-0/data-other-uuid-0.parquet', 2 * DAY);
    // A writer that died 8 days ago: its record goes although its file still exists, then the file.
    const dead = await writeOld(t, 'p=a/bucket-0/data-dead-uuid-0.parquet', 9 * DAY);
    await recordInflightPrefixes(t.io, t.location, 'write-dead-uuid', ['data-dead-uuid-'], { now: () => Date.now() - 8 * DAY });
    const old = new Date(Date.now() - 8 * DAY);
    await utimes(inflightRecordPath(t.location, 'write-dead-uuid'), old, old);
    // A files-only record (older writers, the sink) still protects what it lists.
    const listed = await writeOld(t, 'p=b/bucket-0/data-listed-0.parquet', 2 * DAY);
    await recordInflightFiles(t.io, t.location, 'sink-user-3', ['p=b/bucket-0/data-listed-0.parquet']);

    const r = await removeOrphanFiles(t, { olderThanMs: Date.now() });
    for (const p of [...live, listed, dead]) expect(await t.io.exists(p), p).toBe(true);
    expect(await t.io.exists(orphan)).toBe(false);
    expect(r.inflightRecordsDeleted).toBe(1);
    expect(await t.io.exists(inflightRecordPath(t.location, 'write-dead-uuid'))).toBe(false);
    expect(await t.io.exists(inflightRecordPath(t.location, 'write-live-uuid'))).toBe(true);

    await removeOrphanFiles(t, { olderThanMs: Date.now() });
    expect(await t.io.exists(dead)).toBe(false);
    for (const p of [...live, listed]) expect(await t.io.exists(p), p).toBe(true);
    expect(await consistent(t)).toEqual([]);
  });

  it('deletes young orphans with olderThan = now by default (no grace period)', async () => {
    const t = await createTestTable();
    await t.append([1]);
    const young = await writeOld(t, 'bucket-0/data-young-0.parquet', 1_000);
    await new Promise((r) => setTimeout(r, 5));
    const r = await removeOrphanFiles(t, { olderThanMs: Date.now() });
    expect(r.filesDeleted).toBe(1);
    expect(await t.io.exists(young)).toBe(false);
    // The grace option still spares younger files when asked for.
    const young2 = await writeOld(t, 'bucket-0/data-young-1.parquet', 1_000);
    await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 60_000 });
    expect(await t.io.exists(young2)).toBe(true);
    expect(await consistent(t)).toEqual([]);
  });

  it('removes files left by expiration of tag-less history but keeps what tags use', async () => {
    const t = await createTestTable();
    await t.append([1]);
    await createTag(t.io, t.paths, 'first');
    for (let i = 2; i <= 5; i++) await t.overwrite([i]);
    await expireSnapshots(t, { retainMin: 1, olderThanMs: Date.now() + 60_000 });
    await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
    expect(await consistent(t)).toEqual([]);
    const table = await t.open();
    expect(await readIds(table, { tag: 'first' })).toEqual([1]);
    expect(await readIds(table, {})).toEqual([5]);
  });

  it('refuses a threshold in the future', async () => {
    const t = await createTestTable();
    await expect(removeOrphanFiles(t, { olderThanMs: Date.now() + 60_000 })).rejects.toBeInstanceOf(MaintenanceArgumentError);
  });
});
