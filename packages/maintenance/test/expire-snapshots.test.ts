import { describe, expect, it } from 'vitest';
import type { Snapshot } from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import { SnapshotManager, TagManager, createTag } from '@tidemark/core';
import { DataFileLocator, MaintenanceAbortedError, MaintenanceArgumentError, expireSnapshots } from '../src/index.js';
import { createTestTable, liveFiles, missingReferences, readIds, snapshotIds, type TestTable } from './helpers.js';

/** Appends and overwrites so that files die along the way; tag 't3' on snapshot 3. Returns 12 snapshots. */
async function buildHistory(t: TestTable): Promise<void> {
  await t.append([1, 2]); // 1
  await t.append([3]); // 2
  await t.append([4], 'b'); // 3
  await createTag(t.io, t.paths, 't3', { snapshotId: 3 });
  await t.overwrite([10, 11]); // 4: deletes the files of 1, 2 in partition a (kept by tag t3)
  await t.append([12]); // 5
  await t.overwrite([20]); // 6: deletes files of 4, 5 (only used by expiring snapshots)
  await t.append([21]); // 7
  await t.append([22], 'b'); // 8
  await t.overwrite([30]); // 9
  await t.append([31]); // 10
  await t.overwrite([40], 'b'); // 11
  await t.append([41]); // 12
}

interface State {
  files: Map<string, string[]>;
  rows: Map<string, number[]>;
}

async function captureState(
  t: TestTable,
  snaps: Array<{ key: string; snapshot: Snapshot; at: { snapshotId?: number; tag?: string } }>,
  locate: DataFileLocator,
): Promise<State> {
  const table = await t.open();
  const state: State = { files: new Map(), rows: new Map() };
  for (const { key, snapshot, at } of snaps) {
    state.files.set(key, await liveFiles(t, snapshot, (e) => locate.dataFile(e)));
    state.rows.set(key, await readIds(table, at));
  }
  return state;
}

async function retainedAndTags(t: TestTable, fromId: number) {
  const sm = new SnapshotManager(t.io, t.paths);
  const out: Array<{ key: string; snapshot: Snapshot; at: { snapshotId?: number; tag?: string } }> = [];
  for (const id of await snapshotIds(t))
    if (id >= fromId) out.push({ key: `s${id}`, snapshot: await sm.snapshot(id), at: { snapshotId: id } });
  for (const { name, tag } of await new TagManager(t.io, t.paths).list())
    out.push({ key: `tag:${name}`, snapshot: tag, at: { tag: name } });
  return out;
}

/** Every data file ever live in snapshots 1..12, read before expiring. */
async function everFiles(t: TestTable, locate: DataFileLocator): Promise<Set<string>> {
  const sm = new SnapshotManager(t.io, t.paths);
  const all = new Set<string>();
  for (const id of await snapshotIds(t)) for (const f of await liveFiles(t, await sm.snapshot(id), (e) => locate.dataFile(e))) all.add(f);
  return all;
}

describe('expireSnapshots', () => {
  it('keeps every retained snapshot and tag readable exactly as before and deletes only unneeded files', async () => {
    const t = await createTestTable({ partitioned: true });
    await buildHistory(t);
    const locate = new DataFileLocator(t.paths, t.schema);
    const ever = await everFiles(t, locate);
    const before = await captureState(t, await retainedAndTags(t, 10), locate);

    const summary = await expireSnapshots(t, { retainMin: 3, olderThanMs: Date.now() + 60_000 });
    expect(summary.snapshotsExpired).toBe(9);
    expect(summary.earliestSnapshotId).toBe(10);
    expect(await snapshotIds(t)).toEqual([10, 11, 12]);
    expect(new TextDecoder().decode(await t.io.read(t.paths.earliestHint))).toBe('10');

    const after = await captureState(t, await retainedAndTags(t, 10), locate);
    expect(after).toEqual(before);
    const kept = new Set([...after.files.values()].flat());
    for (const f of ever) expect(await t.io.exists(f), f).toBe(kept.has(f));
    expect(
      await missingReferences(
        t,
        (await retainedAndTags(t, 10)).map((x) => x.snapshot),
        (e) => locate.dataFile(e),
      ),
    ).toEqual([]);
    expect(summary.filesDeleted).toBeGreaterThan(9);
    expect(summary.bytesFreed).toBeGreaterThan(0);
    // Tag t3 kept the files of snapshots 1-3 alive.
    expect(after.rows.get('tag:t3')).toEqual([1, 2, 3, 4]);
  });

  it('respects retainMin, the time threshold and the expire limit', async () => {
    const t = await createTestTable();
    for (let i = 0; i < 6; i++) await t.append([i]);
    const sm = new SnapshotManager(t.io, t.paths);
    // Defaults: retain at least 10 -> nothing to do.
    expect((await expireSnapshots(t)).snapshotsExpired).toBe(0);
    // Time: snapshot 4 committed at/after the threshold -> snapshot 3 (its predecessor) stays.
    const s4 = await sm.snapshot(4);
    const r1 = await expireSnapshots(t, { retainMin: 1, olderThanMs: s4.timeMillis });
    expect(r1.snapshotsExpired).toBe(2);
    expect(await snapshotIds(t)).toEqual([3, 4, 5, 6]);
    // Limit: at most one per run.
    const r2 = await expireSnapshots(t, { retainMin: 1, olderThanMs: Date.now() + 60_000, expireLimit: 1 });
    expect(r2.snapshotsExpired).toBe(1);
    expect(await snapshotIds(t)).toEqual([4, 5, 6]);
    // retainMax drops snapshots regardless of age.
    const r3 = await expireSnapshots(t, { retainMin: 1, retainMax: 2, olderThanMs: 0 });
    expect(r3.snapshotsExpired).toBe(1);
    expect(await snapshotIds(t)).toEqual([5, 6]);
    const table = await t.open();
    expect(await readIds(table, { snapshotId: 5 })).toEqual([0, 1, 2, 3, 4]);
    expect(await readIds(table, { snapshotId: 6 })).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('reads the defaults from table options', async () => {
    const t = await createTestTable();
    for (let i = 0; i < 4; i++) await t.append([i]);
    await t.io.write(
      t.paths.schemaPath(1),
      JSON.stringify({
        ...JSON.parse(new TextDecoder().decode(await t.io.read(t.paths.schemaPath(0)))),
        id: 1,
        options: { 'snapshot.num-retained.min': '2', 'snapshot.time-retained': '1 ms' },
      }),
    );
    await new Promise((r) => setTimeout(r, 5));
    const r = await expireSnapshots(t);
    expect(r.snapshotsExpired).toBe(2);
    expect(await snapshotIds(t)).toEqual([3, 4]);
  });

  it('dry run lists what would go and deletes nothing', async () => {
    const t = await createTestTable({ partitioned: true });
    await buildHistory(t);
    const idsBefore = await snapshotIds(t);
    const dry = await expireSnapshots(t, { retainMin: 3, olderThanMs: Date.now() + 60_000, dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.snapshotsExpired).toBe(9);
    expect(await snapshotIds(t)).toEqual(idsBefore);
    for (const p of dry.deleted!) expect(await t.io.exists(p), p).toBe(true);
    // listDeleted: false: the same figures, no path list, still nothing deleted (snapshot files included).
    const counted = await expireSnapshots(t, { retainMin: 3, olderThanMs: Date.now() + 60_000, dryRun: true, listDeleted: false });
    expect(counted.deleted).toBeUndefined();
    expect([counted.snapshotsExpired, counted.filesDeleted, counted.bytesFreed]).toEqual([9, dry.filesDeleted, dry.bytesFreed]);
    expect(await snapshotIds(t)).toEqual(idsBefore);
    for (const p of dry.deleted!) expect(await t.io.exists(p), p).toBe(true);
    const real = await expireSnapshots(t, { retainMin: 3, olderThanMs: Date.now() + 60_000 });
    expect(real.deleted).toBeUndefined();
    expect(real.filesDeleted).toBe(dry.filesDeleted);
    // The dry run predicts the earliest snapshot the real run leaves.
    expect(dry.earliestSnapshotId).toBe(10);
    expect(real.earliestSnapshotId).toBe(dry.earliestSnapshotId);
    for (const p of dry.deleted!) expect(await t.io.exists(p), p).toBe(false);
  });

  it('an aborted run leaves retained snapshots readable and a rerun finishes the job', async () => {
    // 'snapshots+3': after the first batch of 3 snapshot files (batches of 3).
    for (const stopAt of ['data-files', 'manifests', 'manifest-lists', 'snapshots', 'snapshots+3']) {
      const t = await createTestTable({ partitioned: true });
      await buildHistory(t);
      const locate = new DataFileLocator(t.paths, t.schema);
      const before = await captureState(t, await retainedAndTags(t, 10), locate);
      const ac = new AbortController();
      const [phase, after] = stopAt.split('+') as [string, string | undefined];
      await expect(
        expireSnapshots(t, {
          retainMin: 3,
          olderThanMs: Date.now() + 60_000,
          signal: ac.signal,
          ...(after !== undefined ? { snapshotBatchSize: Number(after) } : {}),
          onProgress: (p) => {
            if (p.phase === phase && p.done >= Number(after ?? 0)) ac.abort();
          },
        }),
      )
        .rejects.toBeInstanceOf(MaintenanceAbortedError)
        .catch((e: unknown) => {
          throw new Error(`stopAt ${stopAt}: ${String(e)}`);
        });
      const retained = await retainedAndTags(t, 10);
      expect(
        await missingReferences(
          t,
          retained.map((x) => x.snapshot),
          (e) => locate.dataFile(e),
        ),
        stopAt,
      ).toEqual([]);
      if (after !== undefined) {
        // The first batch is gone and EARLIEST already points past it.
        expect(await snapshotIds(t), stopAt).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12]);
        expect(await new SnapshotManager(t.io, t.paths).earliestId(), stopAt).toBe(4);
      }
      await expireSnapshots(t, { retainMin: 3, olderThanMs: Date.now() + 60_000 });
      expect(await snapshotIds(t), stopAt).toEqual([10, 11, 12]);
      expect(await captureState(t, await retainedAndTags(t, 10), locate), stopAt).toEqual(before);
    }
  });

  it('rejects invalid retain counts', async () => {
    const t = await createTestTable();
    await expect(expireSnapshots(t, { retainMin: 0 })).rejects.toBeInstanceOf(MaintenanceArgumentError);
    await expect(expireSnapshots(t, { retainMin: 5, retainMax: 2 })).rejects.toBeInstanceOf(MaintenanceArgumentError);
  });
});

/** Call log of a FileIO used by one expiration run; reads are slowed down a little so overlap shows. */
function recording(io: FileIO) {
  const log = {
    existsPaths: [] as string[],
    events: [] as Array<{ op: 'delete' | 'deleteMany' | 'write'; paths: string[]; text?: string }>,
    deletesInFlight: 0,
    maxDeletesInFlight: 0,
    readsInFlight: 0,
    maxReadsInFlight: 0,
  };
  const proxy = new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'exists') {
        return async (path: string) => {
          log.existsPaths.push(path);
          return target.exists(path);
        };
      }
      if (prop === 'write') {
        return async (path: string, data: Uint8Array | string) => {
          if (path.endsWith('/EARLIEST')) {
            log.events.push({ op: 'write', paths: [path], text: typeof data === 'string' ? data : new TextDecoder().decode(data) });
          }
          return target.write(path, data);
        };
      }
      if (prop === 'read') {
        return async (path: string) => {
          log.readsInFlight++;
          log.maxReadsInFlight = Math.max(log.maxReadsInFlight, log.readsInFlight);
          try {
            await new Promise((r) => setTimeout(r, 2));
            return await target.read(path);
          } finally {
            log.readsInFlight--;
          }
        };
      }
      if (prop === 'delete') {
        return async (path: string) => {
          log.events.push({ op: 'delete', paths: [path] });
          log.deletesInFlight++;
          log.maxDeletesInFlight = Math.max(log.maxDeletesInFlight, log.deletesInFlight);
          try {
            await new Promise((r) => setTimeout(r, 1));
            await target.delete(path);
          } finally {
            log.deletesInFlight--;
          }
        };
      }
      if (prop === 'deleteMany') {
        return async (paths: Iterable<string> | AsyncIterable<string>) => {
          const all: string[] = [];
          for await (const p of paths as AsyncIterable<string>) all.push(p);
          log.events.push({ op: 'deleteMany', paths: all });
          return target.deleteMany(all);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { io: proxy, log };
}

describe('expireSnapshots on slow stores', () => {
  it('reads metadata concurrently, batches deletions without existence checks, and deletes snapshot files last, in batches after EARLIEST moved past them', async () => {
    const t = await createTestTable({ partitioned: true });
    await buildHistory(t);
    for (let i = 0; i < 20; i++) await t.overwrite([100 + i]); // snapshots 13..32
    const locate = new DataFileLocator(t.paths, t.schema);
    const before = await captureState(t, await retainedAndTags(t, 30), locate);
    const { io, log } = recording(t.io);

    const summary = await expireSnapshots(
      { fileIO: io, paths: t.paths },
      { retainMin: 3, olderThanMs: Date.now() + 60_000, snapshotBatchSize: 10 },
    );
    expect(summary.snapshotsExpired).toBe(29);
    expect(await snapshotIds(t)).toEqual([30, 31, 32]);
    expect(await captureState(t, await retainedAndTags(t, 30), locate)).toEqual(before);

    // Metadata reads overlap.
    expect(log.maxReadsInFlight).toBeGreaterThan(1);
    // No file is probed before it is deleted: the only existence checks are the few of the
    // EARLIEST/LATEST hint lookups, however many files go.
    const deleted = new Set(log.events.filter((e) => e.op !== 'write').flatMap((e) => e.paths));
    expect(log.existsPaths.filter((p) => deleted.has(p) && !p.startsWith(`${t.paths.snapshotDir}/`))).toEqual([]);
    expect(log.existsPaths.length).toBeLessThanOrEqual(4);
    expect(summary.filesDeleted).toBe(deleted.size);
    // Everything but snapshot files goes in batches, before any snapshot file.
    const isSnapshot = (p: string): boolean => p.startsWith(`${t.paths.snapshotDir}/snapshot-`);
    const firstSnapshotEvent = log.events.findIndex((e) => e.paths.some(isSnapshot));
    expect(log.events.slice(0, firstSnapshotEvent).some((e) => e.op === 'deleteMany' && e.paths.length > 1)).toBe(true);
    expect(
      log.events
        .slice(0, firstSnapshotEvent)
        .flatMap((e) => e.paths)
        .some(isSnapshot),
    ).toBe(false);
    // Then, per batch of 10: EARLIEST names the batch's successor, the batch but its newest file
    // goes in one request, and the newest file alone last (its absence says the batch finished).
    const snap = (id: number): string => t.paths.snapshotPath(id);
    const ids = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => snap(from + i));
    expect(log.events.slice(firstSnapshotEvent - 1)).toEqual([
      { op: 'write', paths: [t.paths.earliestHint], text: '11' },
      { op: 'deleteMany', paths: ids(1, 10) },
      { op: 'delete', paths: [snap(10)] },
      { op: 'write', paths: [t.paths.earliestHint], text: '21' },
      { op: 'deleteMany', paths: ids(11, 20) },
      { op: 'delete', paths: [snap(20)] },
      { op: 'write', paths: [t.paths.earliestHint], text: '30' },
      { op: 'deleteMany', paths: ids(21, 29) },
      { op: 'delete', paths: [snap(29)] },
    ]);
    expect(log.maxDeletesInFlight).toBe(1);
  });
});
