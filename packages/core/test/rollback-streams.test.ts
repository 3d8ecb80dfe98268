/**
 * What a rollback means for stream readers. Rolling back to a tag whose snapshot expired, on a
 * table that keeps its changelog longer than its snapshots: the long-lived changelogs after the
 * target (`changelog/changelog-<id>`) describe commits the rollback undid, so they go with the
 * rollback (Java's RollbackHelper deletes them too); left behind, a stream read from the earliest
 * change returned the undone rows. And a consumer whose next snapshot lay past the target skipped
 * the commits made after the rollback (they reuse the removed ids): it is moved back to the target.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { ChangelogManager, ConsumerManager, FileSystemCatalog, type Table } from '../src/index.js';

let n = 0;

/** Two snapshots kept, the changelog of 50: expiration keeps long-lived changelogs. */
const SHORT_SNAPSHOTS_LONG_CHANGELOG = {
  'snapshot.num-retained.min': '1',
  'snapshot.num-retained.max': '2',
  'changelog.num-retained.max': '50',
};

async function table(retention: Record<string, string> = SHORT_SNAPSHOTS_LONG_CHANGELOG): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://rollback-changelogs-${process.pid}-${++n}/wh`, { fileIO: new MemoryFileIO() });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    options: {
      bucket: '1',
      'changelog-producer': 'input',
      ...retention,
    },
  });
  return catalog.getTable('db.t');
}

/**
 * Every change a stream read from the earliest one returns, as `<kind><id>:<v>`: up to the latest
 * snapshot, or (`waitMs`) for that long, following the table as a streaming reader does.
 */
async function changes(t: Table, waitMs?: number): Promise<string[]> {
  const out: string[] = [];
  const bound = waitMs === undefined ? { to: (await t.snapshotManager.latestId())! } : { signal: AbortSignal.timeout(waitMs) };
  for await (const b of t.newStreamRead({ from: 'earliest', pollIntervalMs: 10, ...bound })) {
    for (const r of b.batch.toArray()) out.push(`${String(r._row_kind)}${String(r.id)}:${String(r.v)}`);
  }
  return out;
}

/** `table()` with one row per commit for ids 1..`commits`, tag 'two' on the second commit. */
async function taggedAtTwo(commits: number): Promise<Table> {
  const t = await table();
  for (let i = 1; i <= commits; i++) {
    await t.append([{ id: i, v: `v${i}` }]);
    if (i === 2) await t.createTag('two');
  }
  return t;
}

/** The ids of the long-lived changelog files, sorted. */
async function changelogIds(t: Table): Promise<number[]> {
  const ids: number[] = [];
  for await (const id of new ChangelogManager(t.fileIO, t.paths).listIds()) ids.push(id);
  return ids.sort((a, b) => a - b);
}

describe('rollback to a tag whose snapshot expired, with long-lived changelogs after it', () => {
  it('removes the changelogs after the target: a stream read returns no undone change', async () => {
    const t = await taggedAtTwo(8);
    const changelogs = new ChangelogManager(t.fileIO, t.paths);
    expect(await t.snapshotManager.earliestId()).toBeGreaterThan(2);
    expect(await changelogs.latestId()).toBeGreaterThan(2);
    const before = await changelogIds(t);
    expect(await changes(t)).toEqual(['+I1:v1', '+I2:v2', '+I3:v3', '+I4:v4', '+I5:v5', '+I6:v6', '+I7:v7', '+I8:v8']);

    const r = await t.rollbackTo('two');
    expect(r.removedChangelogs).toEqual(before.filter((id) => id > 2).sort((a, b) => b - a));
    expect(await t.snapshotManager.latestId()).toBe(2);
    const kept = before.filter((id) => id <= 2);
    expect(await changelogIds(t)).toEqual(kept);
    expect(await changelogs.latestId()).toBe(Math.max(...kept));
    // A reader following the table sees the table as it was at the tag, and waits for snapshot 3.
    expect(await changes(t, 1500)).toEqual(['+I1:v1', '+I2:v2']);
    expect((await t.newRead().toArrowTable()).toArray().map((r) => Number(r.id))).toEqual([1, 2]);

    // Commits after the rollback reuse ids 3, 4, ...: their changes, not the undone ones.
    await t.append([{ id: 30, v: 'new' }]);
    await t.append([{ id: 40, v: 'new' }]);
    expect(await changes(t)).toEqual(['+I1:v1', '+I2:v2', '+I30:new', '+I40:new']);
  });

  it('a dry run reports and keeps them', async () => {
    const t = await taggedAtTwo(6);
    const before = await changelogIds(t);
    const r = await t.rollbackTo('two', { dryRun: true });
    expect(r.removedChangelogs).toEqual(before.filter((id) => id > 2).reverse());
    expect(r.removedChangelogs.length).toBeGreaterThan(0);
    expect(await changelogIds(t)).toEqual(before);
  });
});

describe('rollback and stream consumers', () => {
  it('moves a consumer past the target back to it, so it reads the commits made after the rollback', async () => {
    const t = await table({});
    for (let i = 1; i <= 3; i++) await t.append([{ id: i, v: `v${i}` }]);
    // The consumer read everything: its next snapshot is 4.
    for await (const b of t.newStreamRead({ from: 'earliest', consumerId: 'reader', to: 3, pollIntervalMs: 10 })) void b;
    const early = new ConsumerManager(t.fileIO, t.paths);
    await early.resetConsumer('behind', 2);
    expect(await early.nextSnapshot('reader')).toBe(4);
    const r = await t.rollbackTo(1);
    expect(r.movedConsumers).toEqual(['reader']);
    expect(await early.nextSnapshot('reader')).toBe(2);
    expect(await early.nextSnapshot('behind')).toBe(2);
    // The next commits reuse ids 2, 3, 4: the consumer reads them all.
    for (const id of [20, 30, 40]) await t.append([{ id, v: 'new' }]);
    const seen: string[] = [];
    for await (const b of t.newStreamRead({ consumerId: 'reader', to: 4, pollIntervalMs: 10 })) {
      for (const row of b.batch.toArray()) seen.push(`${String(row._row_kind)}${String(row.id)}`);
    }
    expect(seen).toEqual(['+I20', '+I30', '+I40']);
  });

  it('a dry run names the consumers it would move and moves none', async () => {
    const t = await table({});
    for (let i = 1; i <= 3; i++) await t.append([{ id: i, v: `v${i}` }]);
    const consumers = new ConsumerManager(t.fileIO, t.paths);
    await consumers.resetConsumer('reader', 4);
    const r = await t.rollbackTo(1, { dryRun: true });
    expect(r.movedConsumers).toEqual(['reader']);
    expect(await consumers.nextSnapshot('reader')).toBe(4);
  });
});
