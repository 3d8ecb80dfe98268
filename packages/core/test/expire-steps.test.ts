/**
 * The steps of snapshot and changelog expiration on their own: settings, range bounds, the fold of
 * the read pass, which files a tag governs, batching of the metadata files, and the file deleter.
 * The whole runs are covered by maintenance/test/expire-snapshots.test.ts and the crash tests.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { Snapshot } from '@tidemark/format';
import { tableOptions } from '../src/core-options.js';
import { changelogBatches, changelogBounds } from '../src/expire/expire-changelogs.js';
import { changelogExpireSettings, snapshotExpireSettings } from '../src/expire/expire-settings.js';
import { expiringBounds, snapshotBatches } from '../src/expire/expire-snapshots.js';
import { ExpiringRangeFold, type MarkedFile } from '../src/expire/expiring-range.js';
import { FileDeleter } from '../src/expire/file-deleter.js';
import { MaintenanceAbortedError, MaintenanceArgumentError } from '../src/expire/maintenance-errors.js';
import { governedByTag, unused } from '../src/expire/snapshot-deletion.js';
import type { MaintenanceProgress } from '../src/expire/table-files.js';
import { makeSnapshot, memoryRoot } from './helpers.js';

const options = (o: Record<string, string>, pk = false) => tableOptions({ options: o, primaryKeys: pk ? ['id'] : [] });
const HOUR = 3_600_000;

describe('snapshotExpireSettings', () => {
  it('takes the table options, and the caller options over them', () => {
    const o = options({ 'snapshot.num-retained.min': '4', 'snapshot.num-retained.max': '9', 'snapshot.expire.limit': '7' });
    expect(snapshotExpireSettings({}, o, 10 * HOUR)).toEqual({
      retainMin: 4,
      retainMax: 9,
      limit: 7,
      olderThan: 9 * HOUR,
      batchSize: 1000,
      decoupled: false,
    });
    const s = snapshotExpireSettings({ retainMin: 2, maxDeletes: 3, olderThanMs: 5, snapshotBatchSize: 10 }, o, 10 * HOUR);
    expect(s).toMatchObject({ retainMin: 2, retainMax: 9, limit: 3, olderThan: 5, batchSize: 10 });
  });

  it('a changelog retained with the snapshots keeps them longer; one retained longer is decoupled', () => {
    const coupled = options(
      {
        'changelog-producer': 'input',
        'snapshot.time-retained': '3 h',
        'changelog.num-retained.min': '5',
        'changelog.time-retained': '2 h',
      },
      true,
    );
    const s = snapshotExpireSettings({ retainMin: 2, retainMax: 3, olderThanMs: 9 * HOUR }, coupled, 10 * HOUR);
    // The caller's 2, 3 and 1 h are raised to the changelog's 5 (max follows min) and 2 h.
    expect(s).toMatchObject({ retainMin: 5, retainMax: 5, olderThan: 8 * HOUR, decoupled: false });

    const decoupled = options({ 'changelog-producer': 'input', 'changelog.num-retained.min': '20' }, true);
    expect(snapshotExpireSettings({}, decoupled, 10 * HOUR)).toMatchObject({ retainMin: 10, decoupled: true });
  });

  it('names the option that is out of range', () => {
    const o = options({});
    expect(() => snapshotExpireSettings({ retainMin: 0 }, o, 0)).toThrow(MaintenanceArgumentError);
    expect(() => snapshotExpireSettings({ retainMin: 0 }, o, 0)).toThrow(/snapshot\.num-retained\.min/);
    expect(() => snapshotExpireSettings({ retainMin: 5, retainMax: 4 }, o, 0)).toThrow(/snapshot\.num-retained\.max/);
    expect(() => snapshotExpireSettings({ expireLimit: 0 }, o, 0)).toThrow(/snapshot\.expire\.limit/);
    expect(() => snapshotExpireSettings({ olderThanMs: Number.NaN }, o, 0)).toThrow(/olderThanMs/);
    expect(() => snapshotExpireSettings({ snapshotBatchSize: 1.5 }, o, 0)).toThrow(/snapshotBatchSize/);
  });
});

describe('changelogExpireSettings', () => {
  it('falls back to the snapshot settings, and names the changelog option that is out of range', () => {
    const o = options({ 'snapshot.num-retained.min': '3', 'snapshot.time-retained': '2 h', 'changelog.num-retained.max': '30' });
    expect(changelogExpireSettings({}, o, 10 * HOUR)).toMatchObject({ retainMin: 3, retainMax: 30, olderThan: 8 * HOUR, batchSize: 1000 });
    expect(() => changelogExpireSettings({ retainMin: 0 }, o, 0)).toThrow(/changelog\.num-retained\.min/);
    expect(() => changelogExpireSettings({ retainMin: 40 }, o, 0)).toThrow(/changelog\.num-retained\.max/);
    expect(() => changelogExpireSettings({ batchSize: 0 }, o, 0)).toThrow(/batchSize/);
  });
});

describe('expiring bounds', () => {
  const s = { retainMin: 3, retainMax: 8, limit: 5 };
  it('snapshots: retainMax expires regardless of age, retainMin, the limit and consumers stop the range', () => {
    expect(expiringBounds(1, 20, s, null)).toEqual({ earliest: 1, min: 13, maxExclusive: 6 }); // limit
    expect(expiringBounds(10, 20, s, null)).toEqual({ earliest: 10, min: 13, maxExclusive: 15 }); // limit
    expect(expiringBounds(15, 20, s, null)).toEqual({ earliest: 15, min: 15, maxExclusive: 18 }); // retainMin
    expect(expiringBounds(15, 20, s, 16)).toEqual({ earliest: 15, min: 15, maxExclusive: 16 }); // consumer
    expect(expiringBounds(15, 20, s, 15)).toBeNull();
    expect(expiringBounds(18, 20, s, null)).toBeNull();
  });

  it('changelogs: counted with the snapshots, below the earliest snapshot', () => {
    const a = { earliest: 1, latest: 9, latestSnapshot: 20, earliestSnapshot: 10, consumerMin: null };
    expect(changelogBounds(a, { ...s, limit: 50 })).toEqual({ earliest: 1, min: 13, maxExclusive: 10 });
    expect(changelogBounds({ ...a, consumerMin: 4 }, { ...s, limit: 50 }).maxExclusive).toBe(4);
    expect(changelogBounds(a, s).maxExclusive).toBe(6); // limit
    expect(changelogBounds({ ...a, latest: 7, earliestSnapshot: null }, { ...s, limit: 50 }).maxExclusive).toBe(8);
  });
});

const delta = (add: boolean, path: string) => ({ add, path, extra: add ? [] : [`${path}.index`], size: path.length });

describe('ExpiringRangeFold', () => {
  it('folds in snapshot order: a file deleted and added again later stays, the range ends at the first retained snapshot', () => {
    const s = (id: number) => makeSnapshot(id, id);
    const fold = new ExpiringRangeFold(1, 10);
    const files = (name: string) => ({ leaves: [[name, { path: `m/${name}`, size: 1 }] as const], roots: [], changelogFiles: [] });
    expect(
      fold.add({ id: 2, snapshot: s(2), stop: false, prev: s(1), delta: [delta(false, 'a'), delta(false, 'b')], files: files('m1') }),
    ).toBe(true);
    expect(fold.add({ id: 3, snapshot: s(3), stop: false, prev: null, delta: [delta(true, 'a')], deltaList: [], files: null })).toBe(true);
    expect(fold.add({ id: 4, snapshot: s(4), stop: true })).toBe(false);
    const range = fold.range();
    expect(range.end).toBe(3);
    expect(range.expiring).toEqual([s(1), null]);
    expect(range.endSnapshot).toEqual(s(3));
    expect(range.endDeltaList).toEqual([]);
    expect([...range.marked.values()]).toEqual([{ path: 'b', extra: ['b.index'], size: 1, deletedIn: 2 }]);
    expect([...range.leafFiles.keys()]).toEqual(['m1']);
  });

  it('without a stop, the range ends where the candidates end', () => {
    const fold = new ExpiringRangeFold(4, 6);
    fold.add({ id: 5, snapshot: null, stop: false, prev: makeSnapshot(4, 4), delta: [], deltaList: null, files: null });
    expect(fold.range()).toMatchObject({ earliest: 4, end: 6, endSnapshot: null });
  });
});

describe('snapshot deletion steps', () => {
  it('a tag governs the files deleted after it, up to the next tag', () => {
    const marked = new Map<string, MarkedFile>(
      [2, 3, 5, 6, 9].map((deletedIn) => [`f${deletedIn}`, { path: `f${deletedIn}`, extra: [], size: 0, deletedIn }]),
    );
    expect([...governedByTag(marked, 2, 5).keys()]).toEqual(['f3', 'f5']);
    expect([...governedByTag(marked, 5, Number.MAX_SAFE_INTEGER).keys()]).toEqual(['f6', 'f9']);
  });

  it('unused leaves out what a retained snapshot or tag names', () => {
    const files = new Map([
      ['a', { path: 'm/a', size: 1 }],
      ['b', { path: 'm/b', size: 2 }],
    ]);
    expect([...unused(files, new Set(['a']))]).toEqual([{ path: 'm/b', size: 2 }]);
  });
});

describe('metadata batches', () => {
  const snaps = (ids: Array<number | null>): Array<Snapshot | null> => ids.map((id) => (id === null ? null : makeSnapshot(id, id)));

  it('snapshots: batches of ids oldest first; the hint names the next snapshot that exists; empty batches are skipped', () => {
    const batches = [...snapshotBatches(snaps([1, 2, null, null, 5, 6]), 1, 7, 2)];
    expect(batches.map((b) => ({ ids: b.snapshots.map((s) => s.id), hint: b.hintId, to: b.to }))).toEqual([
      { ids: [1, 2], hint: 5, to: 3 },
      { ids: [5, 6], hint: 7, to: 7 },
    ]);
  });

  it('changelogs: the last batch goes one by one when the hint cannot name a changelog', () => {
    const c = snaps([1, 2, 3, 4, 5]) as Snapshot[];
    expect([...changelogBatches(c, 8, 9, 2)].map((b) => [b.changelogs.map((x) => x.id), b.hintId, b.oneByOne])).toEqual([
      [[1, 2], 3, false],
      [[3, 4], 5, false],
      [[5], 8, false],
    ]);
    expect([...changelogBatches(c, 6, 5, 3)].map((b) => [b.hintId, b.oneByOne])).toEqual([
      [4, false],
      [6, true],
    ]);
  });
});

describe('FileDeleter', () => {
  async function threeFiles() {
    const io = new MemoryFileIO();
    const root = memoryRoot();
    const files = ['a', 'b', 'c'].map((n, i) => ({ path: `${root}/${n}`, size: i + 1 }));
    for (const f of files) await io.write(f.path, 'x');
    return { io, files };
  }

  it('deletes a stream, counting files and the bytes the metadata gives', async () => {
    const { io, files } = await threeFiles();
    const progress: MaintenanceProgress[] = [];
    const d = new FileDeleter(io, { dryRun: false, listDeleted: false, onProgress: (p) => progress.push(p) });
    await d.deleteAll('data-files', files);
    for (const f of files) expect(await io.exists(f.path)).toBe(false);
    expect([d.filesDeleted, d.bytesFreed]).toEqual([3, 6]);
    expect(d.listed()).toEqual({});
    expect(progress).toEqual([{ phase: 'data-files', done: 3, bytesFreed: 6 }]);
  });

  it('a dry run lists and counts the same and deletes nothing; record counts metadata files', async () => {
    const { io, files } = await threeFiles();
    const d = new FileDeleter(io, { dryRun: true, listDeleted: true });
    await d.deleteAll('manifests', files);
    d.record(['snapshot-1']);
    for (const f of files) expect(await io.exists(f.path)).toBe(true);
    expect([d.filesDeleted, d.bytesFreed]).toEqual([4, 6]);
    expect(d.listed()).toEqual({ deleted: [...files.map((f) => f.path), 'snapshot-1'] });
  });

  it('an aborted run deletes nothing', async () => {
    const { io, files } = await threeFiles();
    const abort = new AbortController();
    abort.abort();
    const d = new FileDeleter(io, { dryRun: false, listDeleted: false, signal: abort.signal });
    await expect(d.deleteAll('data-files', files)).rejects.toThrow(MaintenanceAbortedError);
    for (const f of files) expect(await io.exists(f.path)).toBe(true);
  });
});
