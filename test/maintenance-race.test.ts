/**
 * Orphan cleanup racing a live writer (local disk; the real S3 server when configured): a writer
 * (TableWrite + FileStoreCommit, closing the writer after each commit) commits in a loop while
 * cleanups run back to back with olderThan = now and no grace period. Only the in-flight records
 * protect the files of a commit in progress. Afterwards every file of every snapshot must exist,
 * the rows must be complete, and no in-flight record may be left.
 */
import { describe, expect, it } from 'vitest';
import { S3FileIO, type FileIO } from '@tidemark/storage';
import { SnapshotManager, listInflightRecords } from '@tidemark/core';
import { DataFileLocator, removeOrphanFiles } from '@tidemark/maintenance';
import { createTestTable, missingReferences, readIds } from '../packages/maintenance/test/helpers.js';
import { s3Available, s3TestOptions, s3TestRoot } from './support/s3.js';

async function race(io?: FileIO, warehouse?: string): Promise<void> {
  const t = await createTestTable({ partitioned: true, ...(io ? { io } : {}), ...(warehouse ? { warehouse } : {}) });
  const COMMITS = 40;
  const parts = ['a', 'b', 'c'];
  let done = false;
  const writer = (async () => {
    try {
      for (let i = 0; i < COMMITS; i++) {
        await t.append([i], parts[i % parts.length]);
        // An abandoned file (a failed writer's leftover): cleanup should remove these meanwhile.
        await t.io.write(`${t.location}/p=a/bucket-0/data-abandoned-${i}.parquet`, 'x');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      done = true;
    }
  })();
  let cleanups = 0;
  let deleted = 0;
  while (!done) {
    // No grace at all: the in-flight records alone must protect the commit in progress.
    deleted += (await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 })).filesDeleted;
    cleanups++;
  }
  await writer;
  expect(cleanups).toBeGreaterThan(0);
  expect(deleted).toBeGreaterThan(0);
  const sm = new SnapshotManager(t.io, t.paths);
  const snaps = [];
  for (const id of await sm.sortedIds()) snaps.push(await sm.snapshot(id));
  expect(snaps).toHaveLength(COMMITS);
  const locate = new DataFileLocator(t.paths, t.schema);
  expect(await missingReferences(t, snaps, (e) => locate.dataFile(e))).toEqual([]);
  expect(await readIds(await t.open(), {})).toEqual(Array.from({ length: COMMITS }, (_, i) => i));
  // Every writer and commit cleared its record: nothing is protected forever.
  const records = [];
  for await (const r of listInflightRecords(t.io, t.location)) records.push(r.id);
  expect(records).toEqual([]);
  // A last cleanup removes every abandoned file and still keeps every committed one.
  await new Promise((r) => setTimeout(r, 5));
  await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
  for (let i = 0; i < COMMITS; i++) expect(await t.io.exists(`${t.location}/p=a/bucket-0/data-abandoned-${i}.parquet`)).toBe(false);
  expect(await missingReferences(t, snaps, (e) => locate.dataFile(e))).toEqual([]);
}

describe('orphan cleanup racing a writer', () => {
  it('never deletes a committed file (local disk)', async () => {
    await race();
  }, 120_000);

  it.skipIf(!s3Available('maintenance race on S3'))(
    'never deletes a committed file (S3)',
    async () => {
      const io = new S3FileIO(s3TestOptions());
      try {
        await race(io, s3TestRoot('maintenance-race'));
      } finally {
        await io.close();
      }
    },
    300_000,
  );
});
