/**
 * `update-time` partition expiration while a writer commits to a partition it chose: the drop is
 * an OVERWRITE of the partition's files as they are at commit time, so the new file, which makes
 * the partition recent (not expired), went with it. The drop now refuses, naming the partition,
 * and commits nothing; the next run judges the partition again. `values-time` is unchanged (the
 * partition's values make it expired whatever arrives, as in Java).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, PartitionChangedError, type Table } from '../src/index.js';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';

let n = 0;
const local = (day: number, hour = 12): number => new Date(2024, 5, day, hour).getTime();
/** The expiration time, given per run (a table option would make the test's own commits expire partitions too). */
const WEEK = 7 * 86_400_000;

/** A table partitioned by `dt` whose FileIO runs `hook` (once) before the first manifest write after it is armed. */
async function table(
  options: Record<string, string>,
): Promise<{ t: Table; arm: (hook: () => Promise<void>) => void; fired: () => number }> {
  let armed: (() => Promise<void>) | null = null;
  let fired = 0;
  const io = instrumentFileIO(new MemoryFileIO(), {
    async before(r) {
      if (armed !== null && r.method === 'write' && /\/manifest\/manifest-[^/]*$/.test(r.path ?? '')) {
        const hook = armed;
        armed = null;
        fired++;
        await hook();
      }
    },
  });
  const catalog = new FileSystemCatalog(`memory://partition-expire-concurrent-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'dt', type: 'STRING' },
      { name: 'v', type: 'INT' },
    ],
    partitionKeys: ['dt'],
    options,
  });
  return { t: await catalog.getTable('db.t'), arm: (hook) => (armed = hook), fired: () => fired };
}

async function writeAt(t: Table, dt: string, v: number, day: number): Promise<void> {
  const w = t.newBatchWrite({ now: () => local(day) });
  await w.write([{ dt, v }]);
  await t.newCommit({ expire: false, now: () => local(day) }).commit({ messages: await w.prepareCommit() });
  await w.close();
}

async function rows(t: Table): Promise<string[]> {
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => {
      const x = r.toJSON() as { dt: string; v: number };
      return `${x.dt}:${x.v}`;
    })
    .sort();
}

describe('update-time partition expiration and a concurrent write', () => {
  it('a partition written to while the drop commits is not dropped: the run fails naming it, nothing is committed', async () => {
    const { t, arm, fired } = await table({ 'partition.expiration-strategy': 'update-time' });
    await writeAt(t, 'a', 1, 1);
    await writeAt(t, 'b', 2, 2);
    await writeAt(t, 'c', 3, 29);
    const before = await t.snapshotManager.latestId();
    // Right before the drop writes its manifests, a writer adds today's row to partition 'a'.
    arm(() => writeAt(t, 'a', 10, 30));
    const err = await t.expirePartitions({ expirationTimeMs: WEEK, now: () => local(30) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(fired()).toBe(1);
    expect(err).toBeInstanceOf(PartitionChangedError);
    expect((err as Error).message).toMatch(/partition 'dt=a' .* new file/);
    // The writer's commit landed; the drop did not.
    expect(await t.snapshotManager.latestId()).toBe(before! + 1);
    expect(await rows(t)).toEqual(['a:1', 'a:10', 'b:2', 'c:3']);
    // The next run judges again: 'a' is recent now, 'b' is still old.
    const s = await t.expirePartitions({ expirationTimeMs: WEEK, now: () => local(30) + 60_000 });
    expect(s.partitions.map((p) => p.partition)).toEqual(['dt=b']);
    expect(await rows(t)).toEqual(['a:1', 'a:10', 'c:3']);
  });

  it('values-time drops the partition with the late row, as Java does', async () => {
    const { t, arm, fired } = await table({});
    await writeAt(t, '2024-06-01', 1, 1);
    await writeAt(t, '2024-06-29', 2, 29);
    arm(() => writeAt(t, '2024-06-01', 10, 30));
    const s = await t.expirePartitions({ expirationTimeMs: WEEK, now: () => local(30) });
    expect(fired()).toBe(1);
    expect(s.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01']);
    expect(await rows(t)).toEqual(['2024-06-29:2']);
  });
});
