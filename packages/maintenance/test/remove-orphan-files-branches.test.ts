/**
 * Orphan cleanup of a table with branches: whichever branch the table was opened on (the CLI's
 * `maintain --branch`), every snapshot, tag and long-lived changelog of every branch keeps its
 * files, and what no branch reads any more goes.
 */
import { describe, expect, it } from 'vitest';
import { openTable, type Table } from '@tidemark/core';
import { removeOrphanFiles } from '../src/index.js';
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
function cleanAll(table: Table): ReturnType<typeof removeOrphanFiles> {
  const now = Date.now() + 1000;
  return removeOrphanFiles(table, { olderThanMs: now, inProgressGraceMs: 0, now: () => now });
}

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
});
