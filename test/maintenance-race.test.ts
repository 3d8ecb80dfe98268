/**
 * Orphan cleanup racing a live writer (local disk; the real S3 server when configured): a writer
 * commits in a loop while cleanups run back to back with olderThan = now. Afterwards every file
 * of every snapshot must exist and the rows must be complete.
 */
import { describe, expect, it } from 'vitest';
import { S3FileIO, type FileIO } from '@tidemark/storage';
import { SnapshotManager } from '@tidemark/core';
import { DataFileLocator, removeOrphanFiles } from '@tidemark/maintenance';
import { createTestTable, missingReferences, readIds } from '../packages/maintenance/test/helpers.js';
import { s3Available, s3TestOptions, s3TestRoot } from './support/s3.js';

async function race(io?: FileIO, warehouse?: string): Promise<void> {
  const t = await createTestTable({ ...(io ? { io } : {}), ...(warehouse ? { warehouse } : {}) });
  const COMMITS = 25;
  let done = false;
  const writer = (async () => {
    try {
      for (let i = 0; i < COMMITS; i++) {
        await t.append([i]);
        // An abandoned file (a failed writer's leftover): cleanup should remove these meanwhile.
        await t.io.write(`${t.location}/bucket-0/data-abandoned-${i}.parquet`, 'x');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      done = true;
    }
  })();
  let cleanups = 0;
  let deleted = 0;
  while (!done) {
    // A short grace (commits here take milliseconds) instead of the 1 h default, so that the
    // cleanup really deletes during the race.
    deleted += (await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 1500 })).filesDeleted;
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
}

describe('orphan cleanup racing a writer', () => {
  it('never deletes a committed file (local disk)', async () => {
    await race();
  }, 120_000);

  it.skipIf(!s3Available('maintenance race on S3'))('never deletes a committed file (S3)', async () => {
    const io = new S3FileIO(s3TestOptions());
    try {
      await race(io, s3TestRoot('maintenance-race'));
    } finally {
      await io.close();
    }
  }, 300_000);
});
