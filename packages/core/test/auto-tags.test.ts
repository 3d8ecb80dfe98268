/**
 * Automatic tags (`tag.automatic-creation`) on the commit path, with a fake clock: exactly one tag
 * per period crossed, on the first snapshot past the period end plus the delay, named as Java
 * names it; count and time expiration; batch and watermark modes; and a state rebuilt from the
 * tags on storage, so a tag lost between a commit and its creation is made by the next run and a
 * tag already written is not written twice. Times are local wall-clock times in June (no DST
 * change), so the expectations hold in any time zone.
 */
import { describe, expect, it } from 'vitest';
import type { FileIO } from '@tidemark/storage';
import { AutoTagState, FileSystemCatalog, runAutoTags, tableContext, type Table } from '../src/index.js';
import { Clocked, at, autoTagTable, bareCommit } from './auto-tag-helpers.js';

/** The same table opened again (a new process: no state shared with `t`'s committers). */
function reopen(t: Table): Promise<Table> {
  return new FileSystemCatalog(t.location.replace(/\/db\.db\/t$/, ''), { fileIO: t.fileIO }).getTable('db.t');
}

const table = autoTagTable;

async function tags(t: Table): Promise<Array<[string, number]>> {
  return (await t.listTags()).map(({ name, tag }) => [name, tag.id] as [string, number]).sort(([a], [b]) => (a < b ? -1 : 1));
}

async function tagFile(t: Table, name: string): Promise<string> {
  return new TextDecoder().decode(await t.fileIO.read(t.paths.tagPath(name)));
}

describe('automatic tags on commit', () => {
  it('daily with a delay: one tag per day crossed, on the first snapshot past midnight plus the delay', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'daily', 'tag.creation-delay': '10 min' });
    const c = new Clocked(t);
    // As in Java, the first snapshot gets the tag of the day before it at once.
    expect(await c.commitAt(at(1, 10))).toBe(1);
    expect(await tags(t)).toEqual([['2024-05-31', 1]]);
    await c.commitAt(at(1, 23)); // 2
    await c.commitAt(at(2, 0, 5)); // 3: June 1 ended, but the delay has not passed
    expect(await tags(t)).toEqual([['2024-05-31', 1]]);
    await c.commitAt(at(2, 0, 10)); // 4: exactly the end of June 1 plus the delay
    await c.commitAt(at(2, 12)); // 5
    await c.commitAt(at(3, 0, 20)); // 6
    await c.commitAt(at(3, 0, 30)); // 7: June 2 is tagged already
    expect(await tags(t)).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 4],
      ['2024-06-02', 6],
    ]);
    // No commit for a day and a half: the next snapshot tags the period it completes (June 4), not June 3.
    await c.commitAt(at(5, 8)); // 8
    expect((await tags(t)).map(([name]) => name)).toEqual(['2024-05-31', '2024-06-01', '2024-06-02', '2024-06-04']);
    // Without a retention the tag is the snapshot's JSON alone, as Java writes it.
    const file = await tagFile(t, '2024-06-01');
    expect(file).not.toContain('tagCreateTime');
    expect(file).toBe(new TextDecoder().decode(await t.fileIO.read(t.paths.snapshotPath(4))));
  });

  it('hourly without dashes: one tag per hour, the boundary itself included', async () => {
    const t = await table({
      'tag.automatic-creation': 'process-time',
      'tag.creation-period': 'hourly',
      'tag.period-formatter': 'without_dashes',
    });
    const c = new Clocked(t);
    await c.commitAt(at(10, 9, 30)); // 1: tags 08
    await c.commitAt(at(10, 9, 59)); // 2
    await c.commitAt(at(10, 10, 0)); // 3: tags 09
    await c.commitAt(at(10, 10, 1)); // 4
    await c.commitAt(at(10, 11, 30)); // 5: tags 10
    await c.commitAt(at(10, 11, 45)); // 6
    expect(await tags(t)).toEqual([
      ['20240610 08', 1],
      ['20240610 09', 3],
      ['20240610 10', 5],
    ]);
  });

  it('two-hours and a period duration name their periods as Java does', async () => {
    const two = await table({ 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'two-hours' });
    const c2 = new Clocked(two);
    await c2.commitAt(at(10, 9, 30)); // period [08, 10) -> previous [06, 08)
    await c2.commitAt(at(10, 10, 5)); // crosses 10:00 -> 08
    expect((await tags(two)).map(([name]) => name)).toEqual(['2024-06-10 06', '2024-06-10 08']);
    const minutes = await table({ 'tag.automatic-creation': 'process-time', 'tag.creation-period-duration': '30 min' });
    const cm = new Clocked(minutes);
    await cm.commitAt(at(10, 9, 40)); // -> 09:00
    await cm.commitAt(at(10, 10, 0)); // -> 09:30
    expect((await tags(minutes)).map(([name]) => name)).toEqual(['202406100900', '202406100930']);
  });

  it('tag.num-retained-max keeps the newest automatic tags and leaves other tags alone', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'tag.num-retained-max': '3' });
    const c = new Clocked(t);
    await c.commitAt(at(1, 12));
    await t.createTag('release');
    for (let day = 2; day <= 6; day++) await c.commitAt(at(day, 12));
    expect((await tags(t)).map(([name]) => name)).toEqual(['2024-06-03', '2024-06-04', '2024-06-05', 'release']);
  });

  it('tag.default-time-retained: tags carry their creation time and retention, and expire by time (manual tags too)', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'tag.default-time-retained': '2 d' });
    const c = new Clocked(t);
    await c.commitAt(at(1, 12)); // tag 05-31, created at June 1 12:00
    c.now = at(1, 13);
    const manual = await t.createTag('short', { now: () => c.now, timeRetained: { seconds: 3600, nanos: 0 } });
    expect(manual.tagTimeRetained).toEqual({ seconds: 3600, nanos: 0 });
    const auto = (await t.listTags()).find((x) => x.name === '2024-05-31')!.tag;
    expect(auto.tagTimeRetained).toEqual({ seconds: 172_800, nanos: 0 });
    // tagCreateTime is the local wall clock stored as if UTC, like Java's LocalDateTime.now().
    expect(auto.tagCreateTime).toEqual({ millis: Date.UTC(2024, 5, 1, 12, 0), nanoOfMillis: 0 });
    expect(await tagFile(t, '2024-05-31')).toMatch(
      /"tagCreateTime" : \[ 2024, 6, 1, 12, 0 \],\n {2}"tagTimeRetained" : 172800\.000000000\n}$/,
    );
    await c.commitAt(at(2, 12)); // tags 06-01; 'short' expired at 14:00
    expect((await tags(t)).map(([name]) => name)).toEqual(['2024-05-31', '2024-06-01']);
    await c.commitAt(at(3, 12, 1)); // 05-31 (created June 1 12:00, 2 days) is past its retention now
    expect((await tags(t)).map(([name]) => name)).toEqual(['2024-06-01', '2024-06-02']);
  });

  it('batch: each batch commit tags its snapshot batch-write-<date>, replacing that day’s tag; num-retained-max counts the batch tags', async () => {
    const t = await table({ 'tag.automatic-creation': 'batch', 'tag.num-retained-max': '2' });
    const c = new Clocked(t, true);
    await c.commitAt(at(1, 9));
    await c.commitAt(at(1, 18));
    expect(await tags(t)).toEqual([['batch-write-2024-06-01', 2]]);
    await c.commitAt(at(2, 9));
    await c.commitAt(at(3, 9));
    expect(await tags(t)).toEqual([
      ['batch-write-2024-06-02', 3],
      ['batch-write-2024-06-03', 4],
    ]);
    // A streaming commit (not the batch identifier) makes no batch tag.
    const streaming = new Clocked(t, false, 0n, 'stream');
    await streaming.commitAt(at(4, 9));
    expect((await tags(t)).map(([name]) => name)).toEqual(['batch-write-2024-06-02', 'batch-write-2024-06-03']);
  });

  it('watermark: snapshots are tagged by their watermark (sink.watermark-time-zone, default UTC); none without one', async () => {
    const t = await table({ 'tag.automatic-creation': 'watermark', 'tag.creation-period': 'hourly' });
    const c = new Clocked(t);
    await c.commitAt(at(1, 12)); // no watermark: no tag
    expect(await tags(t)).toEqual([]);
    await c.commitAt(at(1, 12, 5), { watermark: BigInt(Date.UTC(2024, 5, 1, 7, 30)) }); // 2: tags 06
    await c.commitAt(at(1, 12, 6), { watermark: BigInt(Date.UTC(2024, 5, 1, 7, 59)) }); // 3
    await c.commitAt(at(1, 12, 7), { watermark: BigInt(Date.UTC(2024, 5, 1, 8, 0)) }); // 4: tags 07
    expect(await tags(t)).toEqual([
      ['2024-06-01 06', 2],
      ['2024-06-01 07', 4],
    ]);
  });

  it('write-only tables get no automatic tags', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'write-only': 'true' });
    await new Clocked(t).commitAt(at(1, 12));
    expect(await tags(t)).toEqual([]);
  });

  it('a tag missed between a commit and its creation is made by the next run, on the snapshot that crossed the boundary, once', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time' });
    const c = new Clocked(t);
    await c.commitAt(at(1, 12)); // 1: 05-31
    await c.commitAt(at(1, 20)); // 2
    // A process commits June 2's first snapshot and dies before its tag.
    expect(await bareCommit(t, at(2, 0, 30), 1n)).toBe(3);
    expect((await tags(t)).map(([name]) => name)).toEqual(['2024-05-31']);
    // The next commit, by a committer that never saw snapshot 3, tags it.
    const reopened = await reopen(t);
    await new Clocked(reopened, false, 100n).commitAt(at(2, 9)); // 4
    expect(await tags(t)).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 3],
    ]);
    // A run that finds the tag already written (a crash right after writing it) writes nothing again.
    const again = await runAutoTags(reopened.context, new AutoTagState(), { now: () => at(2, 10), fullCheck: true });
    expect(again.created).toEqual([]);
    await t.fileIO.delete(t.paths.tagPath('2024-06-01'));
    const repaired = await runAutoTags(reopened.context, new AutoTagState(), { now: () => at(2, 10), fullCheck: true });
    expect(repaired.created).toEqual([{ name: '2024-06-01', snapshotId: 3 }]);
    expect(await tags(t)).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 3],
    ]);
  });

  it('a run reads a few snapshots per tag, not every snapshot since the last one', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'hourly' });
    // 150 snapshots, one a minute from 00:30, committed by processes that died before tagging.
    for (let i = 0; i < 150; i++) await bareCommit(t, at(1, 0, 30) + i * 60_000, BigInt(i + 1));
    const reads: string[] = [];
    const io = t.fileIO;
    const counting = new Proxy(io, {
      get(target, prop) {
        if (prop === 'read') return (p: string) => (reads.push(p), target.read(p));
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as FileIO;
    const s = await runAutoTags(tableContext(counting, t.location, t.schema()), new AutoTagState(), {
      now: () => at(1, 4),
      fullCheck: true,
    });
    // The first snapshot (00:30) tags the hour before it; 01:00 is snapshot 31, 02:00 snapshot 91.
    expect(s.created).toEqual([
      { name: '2024-05-31 23', snapshotId: 1 },
      { name: '2024-06-01 00', snapshotId: 31 },
      { name: '2024-06-01 01', snapshotId: 91 },
    ]);
    const snapshotReads = reads.filter((p) => /\/snapshot\/snapshot-\d+$/.test(p)).length;
    expect(snapshotReads).toBeLessThan(40);
  });
});
