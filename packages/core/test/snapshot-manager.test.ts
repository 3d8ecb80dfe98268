import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { SnapshotManager } from '../src/snapshot-manager.js';
import { SnapshotNotFoundError, TimeTravelError } from '../src/errors.js';
import { CountingFileIO, TablePaths, memoryRoot, range, writeSnapshots } from './helpers.js';

function setup() {
  const io = new CountingFileIO(new MemoryFileIO());
  const paths = new TablePaths(memoryRoot());
  return { io, paths, sm: new SnapshotManager(io, paths) };
}

describe('SnapshotManager.latestId', () => {
  it('returns null for a table without snapshots', async () => {
    const { sm } = setup();
    expect(await sm.latestId()).toBeNull();
    expect(await sm.earliestId()).toBeNull();
    expect(await sm.latest()).toBeNull();
  });

  it('trusts a correct LATEST hint without listing', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 5), { latest: '5' });
    io.lists = 0;
    expect(await sm.latestId()).toBe(5);
    expect(io.lists).toBe(0);
  });

  it('lists snapshot/ when LATEST is missing', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 12));
    expect(await sm.latestId()).toBe(12);
    expect(io.lists).toBeGreaterThan(0);
  });

  it('probes forward from a stale hint', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 7), { latest: '4' });
    io.lists = 0;
    expect(await sm.latestId()).toBe(7);
    expect(io.lists).toBe(0);
  });

  it('falls back to listing when the hint is very stale', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 40), { latest: '2' });
    expect(await sm.latestId()).toBe(40);
  });

  it.each([['garbage'], [''], ['-3'], ['0'], ['5.5'], ['99']])('ignores a bad LATEST hint %j', async (hint) => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(3, 9), { latest: hint });
    expect(await sm.latestId()).toBe(9);
  });

  it('accepts a hint with surrounding whitespace', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 3), { latest: '3\n' });
    expect(await sm.latestId()).toBe(3);
  });

  it('ignores non-snapshot names and temporary files in snapshot/', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 3));
    await io.write(`${paths.snapshotDir}/.snapshot-4.0b1c.tmp`, '{}');
    await io.write(`${paths.snapshotDir}/snapshot-5-old`, '{}');
    await io.write(`${paths.snapshotDir}/snapshot-`, '{}');
    await io.write(`${paths.snapshotDir}/xsnapshot-9`, '{}');
    expect(await sm.latestId()).toBe(3);
    expect(await sm.sortedIds()).toEqual([1, 2, 3]);
  });
});

describe('SnapshotManager.earliestId', () => {
  it('uses a correct EARLIEST hint', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(4, 8), { earliest: '4' });
    io.lists = 0;
    expect(await sm.earliestId()).toBe(4);
    expect(io.lists).toBe(0);
  });

  it('lists after early snapshots were deleted and the hint is stale', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 8), { earliest: '1', latest: '8' });
    for (const id of [1, 2, 3]) await io.delete(paths.snapshotPath(id));
    expect(await sm.earliestId()).toBe(4);
    expect((await sm.earliest())?.id).toBe(4);
  });

  it('trusts an EARLIEST hint whose snapshot exists (as Java Paimon does): older files are leftovers no reader sees', async () => {
    const { io, paths, sm } = setup();
    // An expiration killed in the middle of a batch: EARLIEST already points past the batch,
    // and 2 and 4 survived the cut DeleteObjects.
    await writeSnapshots(io, paths, [2, 4, 5, 6, 7], { earliest: '5', latest: '7' });
    io.lists = 0;
    expect(await sm.earliestId()).toBe(5);
    expect(io.lists).toBe(0);
    expect(await sm.earliestProbe()).toEqual({ id: 5, leftoversBelow: true });
    expect((await sm.earliest())?.id).toBe(5);
    expect(await sm.sortedIds()).toEqual([5, 6, 7]);
    const leftovers: number[] = [];
    for await (const id of sm.leftoverIds(5)) leftovers.push(id);
    expect(leftovers.sort()).toEqual([2, 4]);
    const ascending: number[] = [];
    for await (const s of sm.iterateForward()) ascending.push(s.id);
    expect(ascending).toEqual([5, 6, 7]);
    // Naming a leftover (time travel, tags) is "not found", with the chain's range.
    const err = await sm.snapshotInChain(4).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotNotFoundError);
    expect((err as SnapshotNotFoundError).earliestId).toBe(5);
    expect((await sm.snapshotInChain(6)).id).toBe(6);
  });

  it('reports no leftovers once the snapshot below EARLIEST is gone', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, [5, 6], { earliest: '5' });
    expect(await sm.earliestProbe()).toEqual({ id: 5, leftoversBelow: false });
    // A hint naming a missing snapshot is not trusted: the listing decides.
    await io.write(paths.earliestHint, '4');
    expect(await sm.earliestProbe()).toEqual({ id: 5, leftoversBelow: false });
  });

  it('lists when EARLIEST is missing or garbage', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(6, 9), { earliest: 'x' });
    expect(await sm.earliestId()).toBe(6);
    await io.delete(paths.earliestHint);
    expect(await sm.earliestId()).toBe(6);
  });
});

describe('SnapshotManager.snapshot', () => {
  it('reads a snapshot by id', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 3));
    const s = await sm.snapshot(2);
    expect(s.id).toBe(2);
    expect(s.timeMillis).toBe(2000);
    expect(s.commitIdentifier).toBe(9223372036854775807n);
  });

  it('names earliest and latest for a missing id', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(3, 9), { latest: '9', earliest: '3' });
    const err = await sm.snapshot(7 + 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotNotFoundError);
    expect((err as SnapshotNotFoundError).message).toBe('snapshot 17 does not exist; earliest is 3, latest is 9');
    expect((err as SnapshotNotFoundError).userError).toBe(true);
    await expect(sm.snapshot(1)).rejects.toThrow('snapshot 1 does not exist; earliest is 3, latest is 9');
    expect(await sm.tryGet(1)).toBeNull();
  });

  it('says the table is empty when there are no snapshots', async () => {
    const { sm } = setup();
    await expect(sm.snapshot(1)).rejects.toThrow('snapshot 1 does not exist; the table has no snapshots');
  });
});

describe('SnapshotManager.snapshotAtOrBefore', () => {
  it('finds exact hits and the latest snapshot before a time', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 20), { latest: '20', earliest: '1' });
    for (const id of range(1, 20)) {
      expect((await sm.snapshotAtOrBefore(id * 1000)).id).toBe(id);
      expect((await sm.snapshotAtOrBefore(id * 1000 + 999)).id).toBe(id);
    }
    expect((await sm.snapshotAtOrBefore(10 ** 12)).id).toBe(20);
  });

  it('rejects a time before the first snapshot, naming its time', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(3, 6));
    const err = await sm.snapshotAtOrBefore(2999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeTravelError);
    expect((err as Error).message).toContain('earliest snapshot 3');
    expect((err as Error).message).toContain(new Date(3000).toISOString());
  });

  it('rejects time travel on an empty table', async () => {
    const { sm } = setup();
    await expect(sm.snapshotAtOrBefore(5)).rejects.toBeInstanceOf(TimeTravelError);
  });

  it('tolerates missing ids in the middle', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 30), { latest: '30' });
    for (const id of [5, 6, 7, 8, 15, 16, 17, 18, 19, 20, 21, 22, 23]) await io.delete(paths.snapshotPath(id));
    const expected = (t: number) =>
      Math.max(...range(1, 30).filter((id) => ![5, 6, 7, 8, 15, 16, 17, 18, 19, 20, 21, 22, 23].includes(id) && id * 1000 <= t));
    for (let t = 1000; t <= 31_000; t += 500) {
      expect((await sm.snapshotAtOrBefore(t)).id).toBe(expected(t));
    }
  });

  it('handles equal commit times by returning the highest such id', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(1, 6), { time: (id) => (id <= 3 ? 100 : 200) });
    expect((await sm.snapshotAtOrBefore(100)).id).toBe(3);
    expect((await sm.snapshotAtOrBefore(199)).id).toBe(3);
    expect((await sm.snapshotAtOrBefore(200)).id).toBe(6);
  });
});

describe('SnapshotManager iteration', () => {
  it('iterates forward and backward skipping holes', async () => {
    const { io, paths, sm } = setup();
    await writeSnapshots(io, paths, range(2, 7));
    await io.delete(paths.snapshotPath(4));
    const fwd: number[] = [];
    for await (const s of sm.iterateForward()) fwd.push(s.id);
    expect(fwd).toEqual([2, 3, 5, 6, 7]);
    const back: number[] = [];
    for await (const s of sm.iterateBackward(6)) back.push(s.id);
    expect(back).toEqual([6, 5, 3, 2]);
  });
});
