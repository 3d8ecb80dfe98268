/**
 * The table report on tables whose contents the test wrote itself: every expected count and size is
 * derived from the files each commit left on disk (a directory listing before and after it), not
 * from the manifests the report reads.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readManifestList } from '@tidemark/format';
import type { Table } from '@tidemark/core';
import { compactAppendTable, compactPrimaryKeyTable, expireSnapshots, inspectTable, type TableReport } from '../src/index.js';
import { createTable } from './compact-helpers.js';

const TARGET = 64 * 1024;
const HOUR = 3_600_000;

interface DataFile {
  readonly path: string;
  readonly size: number;
}

/** Parquet data files under the table directory, by path. */
async function dataFiles(table: Table): Promise<Map<string, DataFile>> {
  const out = new Map<string, DataFile>();
  for await (const st of table.fileIO.list(table.location, { recursive: true })) {
    if (/\/bucket-\d+\/data-[^/]+\.parquet$/.test(st.path)) out.set(st.path, { path: st.path, size: st.size });
  }
  return out;
}

/** Runs a commit and returns the data files it wrote (new on disk afterwards). */
async function written(table: Table, commit: () => Promise<unknown>): Promise<DataFile[]> {
  const before = await dataFiles(table);
  await commit();
  return [...(await dataFiles(table)).values()].filter((f) => !before.has(f.path));
}

/** The test's own binning: edges at target × 2^k for k = -6 … 1. */
function expectedBin(size: number): number {
  const edges = [1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2].map((f) => Math.floor(f * TARGET));
  let bin = 0;
  for (const e of edges) if (size >= e) bin++;
  return bin;
}

function histogram(files: readonly DataFile[]): number[] {
  const h = new Array<number>(9).fill(0);
  for (const f of files) h[expectedBin(f.size)]!++;
  return h;
}

const sum = (files: readonly DataFile[]): number => files.reduce((s, f) => s + f.size, 0);
const partitionOf = (f: DataFile): string => /\/p=([^/]+)\/bucket-/.exec(f.path)![1]!;
const rows = (ids: readonly number[], p: string, payload = 0) =>
  ids.map((id) => ({ id, p, s: payload > 0 ? randomBytes(payload).toString('hex') : `v${id}` }));
const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

describe('inspectTable', () => {
  it('reports timeline, file sizes, partitions, manifests and what maintenance would do, as the test wrote them', async () => {
    const table = await createTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'p', type: 'STRING' },
        { name: 's', type: 'STRING' },
      ],
      partitionKeys: ['p'],
      options: { 'target-file-size': '64 kb', 'compaction.min.file-num': '3', 'snapshot.num-retained.min': '3' },
    });
    // Per snapshot: what it added and removed, from the disk.
    const expected: Array<{ kind: string; added: DataFile[]; removed: DataFile[]; rowsAdded: number; rowsRemoved: number }> = [];
    const live = new Map<string, DataFile>();
    const rowCount = new Map<string, number>();
    const append = async (ids: number[], p: string, payload = 0): Promise<void> => {
      const files = await written(table, () => table.append(rows(ids, p, payload)));
      expect(files).toHaveLength(1);
      for (const f of files) {
        live.set(f.path, f);
        rowCount.set(f.path, ids.length);
      }
      expected.push({ kind: 'APPEND', added: files, removed: [], rowsAdded: ids.length, rowsRemoved: 0 });
    };
    await append(range(1, 10), 'a');
    await append(range(11, 5), 'a');
    await append(range(16, 5), 'b');
    await append(range(21, 3), 'a');
    await table.createTag('t3', { snapshotId: 3 });

    // OVERWRITE of b: its one file goes, a big file of random text (another size bin) comes.
    const removedB = [...live.values()].filter((f) => partitionOf(f) === 'b');
    const big = range(100, 1500);
    const overwritten = await written(table, () => table.overwrite(rows(big, 'b', 12), { partition: { p: 'b' } }));
    for (const f of removedB) live.delete(f.path);
    for (const f of overwritten) {
      live.set(f.path, f);
      rowCount.set(f.path, big.length);
    }
    expected.push({ kind: 'OVERWRITE', added: overwritten, removed: removedB, rowsAdded: big.length, rowsRemoved: 5 });

    // COMPACT of a: its three files become one.
    const removedA = [...live.values()].filter((f) => partitionOf(f) === 'a');
    const compacted = await written(table, () => compactAppendTable(table, { full: true, partition: { p: 'a' } }));
    expect(compacted).toHaveLength(1);
    for (const f of removedA) live.delete(f.path);
    for (const f of compacted) {
      live.set(f.path, f);
      rowCount.set(f.path, 18);
    }
    expected.push({ kind: 'COMPACT', added: compacted, removed: removedA, rowsAdded: 18, rowsRemoved: 18 });

    await append(range(200, 2), 'a');
    await append(range(202, 2), 'a');
    await append(range(204, 2), 'a');

    // Two orphans: files in a bucket directory no snapshot references.
    const orphanDir = [...live.values()].find((f) => partitionOf(f) === 'a')!.path.replace(/[^/]+$/, '');
    await table.fileIO.write(`${orphanDir}data-orphan-1.parquet`, new Uint8Array(123));
    await table.fileIO.write(`${orphanDir}data-orphan-2.parquet`, new Uint8Array(77));
    await new Promise((r) => setTimeout(r, 20));

    const now = Date.now() + 2 * HOUR;
    const report: TableReport = await inspectTable(table, { now: () => now, orphanOlderThanMs: now - HOUR / 2 });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);

    // Timeline: one entry per snapshot with the kinds, rows and files the test committed.
    expect(report.timeline.retained).toBe(9);
    expect(report.timeline.omitted).toBe(0);
    expect(report.timeline.snapshots.map((s) => s.id)).toEqual(range(1, 9));
    expect(report.timeline.snapshots.map((s) => [s.kind, s.rowsAdded, s.rowsRemoved])).toEqual(
      expected.map((e) => [e.kind, e.rowsAdded, e.rowsRemoved]),
    );
    expect(report.timeline.snapshots.map((s) => [s.filesAdded, s.filesRemoved, s.bytesAdded, s.bytesRemoved])).toEqual(
      expected.map((e) => [e.added.length, e.removed.length, sum(e.added), sum(e.removed)]),
    );
    expect(report.timeline.byKind).toEqual({ APPEND: 7, OVERWRITE: 1, COMPACT: 1 });
    expect(report.tags).toEqual([{ name: 't3', snapshotId: 3 }]);

    // Live files and sizes.
    const liveFiles = [...live.values()];
    const inA = liveFiles.filter((f) => partitionOf(f) === 'a');
    const inB = liveFiles.filter((f) => partitionOf(f) === 'b');
    expect(report.liveFiles).toEqual({
      files: 5,
      bytes: sum(liveFiles),
      rows: [...live.keys()].reduce((s, p) => s + rowCount.get(p)!, 0),
      deletedRows: 0,
      partitions: 2,
      buckets: 2,
      levels: { '0': 5 },
    });
    expect(report.fileSizes.targetFileSize).toBe(TARGET);
    expect(report.fileSizes.smallFileBytes).toBeCloseTo(TARGET * 0.7);
    expect(report.fileSizes.bins).toHaveLength(9);
    expect(report.fileSizes.histogram).toEqual(histogram(liveFiles));
    expect(report.fileSizes.histogram.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2); // the test spans bins
    expect(report.fileSizes.smallFiles).toBe(liveFiles.filter((f) => f.size < TARGET * 0.7).length);

    const byBytes = [
      { p: 'a', files: inA },
      { p: 'b', files: inB },
    ].sort((x, y) => sum(y.files) - sum(x.files));
    expect(report.largestPartitions.map((p) => [p.partition, p.path, p.files, p.bytes, p.buckets, p.histogram])).toEqual(
      byBytes.map((x) => [{ p: x.p }, `p=${x.p}/`, x.files.length, sum(x.files), 1, histogram(x.files)]),
    );
    expect(report.bucketSkew).toEqual([]); // one bucket per partition: nothing to compare

    // Manifests: the latest snapshot's base and delta manifests, sized on disk.
    const latest = (await table.snapshotManager.latest())!;
    const metas = [
      ...(await readManifestList(table.fileIO, table.paths.manifestPath(latest.baseManifestList))),
      ...(await readManifestList(table.fileIO, table.paths.manifestPath(latest.deltaManifestList))),
    ];
    const manifestBytes = await Promise.all(metas.map(async (m) => (await table.fileIO.stat(table.paths.manifestPath(m.fileName))).size));
    expect(report.manifests.count).toBe(metas.length);
    expect(report.manifests.bytes).toBe(manifestBytes.reduce((s, n) => s + n, 0));

    // Maintenance: compaction would merge partition a's four small files; b's big one stays.
    const m = report.maintenance!;
    expect(m.compaction).toEqual({
      status: 'planned',
      mode: 'append',
      files: 4,
      bytes: sum(inA),
      rows: 24,
      windows: 1,
      partitions: 1,
      remainingWindows: 0,
      trigger: { option: 'compaction.min.file-num', value: 3 },
    });
    expect(m.orphans).toMatchObject({ status: 'planned', files: 2, bytes: 200, olderThan: new Date(now - HOUR / 2).toISOString() });
    // Expiration keeps snapshot.num-retained.min = 3 of 9; what the real job then does matches the plan.
    expect(m.expire).toMatchObject({ status: 'planned', snapshots: 6, fromSnapshotId: 1, toSnapshotId: 6, retainMin: 3 });
    const real = await expireSnapshots(table, { now: () => now });
    expect(m.expire).toMatchObject({ files: real.filesDeleted, bytes: real.bytesFreed });
    expect(await table.snapshotManager.sortedIds()).toEqual([7, 8, 9]);
    expect(m.manifests.status).toBe('planned');
  });

  it('measures bucket skew of a fixed-bucket table from the bytes in each bucket', async () => {
    const table = await createTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'p', type: 'STRING' },
        { name: 's', type: 'STRING' },
      ],
      options: { bucket: '4', 'bucket-key': 'id' },
    });
    // Many rows in one commit, then a few more commits of single rows: buckets end up uneven.
    await table.append(rows(range(0, 400), 'x', 16));
    for (let i = 0; i < 3; i++) await table.append(rows([1000 + i], 'x'));
    const files = [...(await dataFiles(table)).values()];
    const perBucket = new Map<number, DataFile[]>();
    for (const f of files) {
      const b = Number(/\/bucket-(\d+)\//.exec(f.path)![1]);
      perBucket.set(b, [...(perBucket.get(b) ?? []), f]);
    }
    const total = sum(files);
    const largest = Math.max(...[...perBucket.values()].map(sum));

    const report = await inspectTable(table, { maintenance: false });
    expect(report.maintenance).toBeNull();
    expect(report.bucket).toBe(4);
    expect(report.bucketSkew).toHaveLength(1);
    const skew = report.bucketSkew[0]!;
    expect(skew.partition).toEqual({});
    expect(skew.buckets).toBe(4);
    expect(skew.meanBytes).toBe(total / 4);
    expect(skew.ratio).toBeCloseTo(largest / (total / 4), 10);
    expect(skew.largest.bytes).toBe(largest);
    expect(skew.sizes.map((b) => [b.bucket, b.files, b.bytes])).toEqual(
      [...perBucket.entries()].sort((a, b) => a[0] - b[0]).map(([b, fs]) => [b, fs.length, sum(fs)]),
    );
  });

  it('counts empty buckets of a fixed bucket count as skew', async () => {
    const table = await createTable({
      fields: [{ name: 'id', type: 'INT' }],
      options: { bucket: '4', 'bucket-key': 'id' },
    });
    await table.append([{ id: 7 }]); // one row: one bucket holds everything, three are empty
    const [file] = [...(await dataFiles(table)).values()];
    const bucket = Number(/\/bucket-(\d+)\//.exec(file!.path)![1]);
    const report = await inspectTable(table, { maintenance: false });
    expect(report.bucketSkew).toHaveLength(1);
    const skew = report.bucketSkew[0]!;
    expect(skew).toMatchObject({ buckets: 4, ratio: 4, meanBytes: file!.size / 4, largest: { bucket, files: 1, bytes: file!.size } });
    expect(skew.sizes.map((b) => [b.bucket, b.bytes])).toEqual([0, 1, 2, 3].map((b) => [b, b === bucket ? file!.size : 0]));
  });

  it('limits the timeline to the newest snapshots and reports the rest as omitted', async () => {
    const table = await createTable({ fields: [{ name: 'id', type: 'INT' }] });
    for (let i = 0; i < 5; i++) await table.append([{ id: i }]);
    const report = await inspectTable(table, { timelineLimit: 2, maintenance: false });
    expect(report.timeline.snapshots.map((s) => s.id)).toEqual([4, 5]);
    expect(report.timeline).toMatchObject({ retained: 5, omitted: 3, earliestSnapshotId: 1, latestSnapshotId: 5, byKind: { APPEND: 2 } });
    await expect(inspectTable(table, { timelineLimit: 0 })).rejects.toThrow(/timelineLimit must be a positive integer/);
  });

  it('primary-key tables: files per LSM level, and the compaction the real job then runs', async () => {
    const table = await createTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      // write-only: the writers do not compact on their own, so the files are the commits'.
      options: { bucket: '2', 'write-only': 'true' },
    });
    // Six commits of upserts, each touching keys of both buckets: 12 level-0 files.
    for (let c = 0; c < 6; c++) await table.append(range(0, 20).map((k) => ({ k, v: `c${c}` })));
    const files = [...(await dataFiles(table)).values()];
    expect(files).toHaveLength(12);
    const report = await inspectTable(table, { orphanOlderThanMs: Date.now() - HOUR });
    expect(report.primaryKeys).toEqual(['k']);
    expect(report.liveFiles).toMatchObject({ files: 12, bytes: sum(files), rows: 120, partitions: 1, buckets: 2, levels: { '0': 12 } });
    expect(report.timeline.snapshots.map((s) => [s.kind, s.rowsAdded])).toEqual(range(0, 6).map(() => ['APPEND', 20]));
    const plan = report.maintenance!.compaction;
    expect(plan).toMatchObject({ status: 'planned', mode: 'primary-key', windows: 2 });
    const real = await compactPrimaryKeyTable(table);
    expect(plan).toMatchObject({ files: real.filesBefore, windows: real.windows, partitions: real.partitions });
    expect(plan).toMatchObject({ files: 12, rows: 120 }); // five sorted runs trigger a merge of every run of a bucket
    const after = await inspectTable(table, { maintenance: false });
    expect(after.timeline.snapshots.at(-1)).toMatchObject({ kind: 'COMPACT', filesRemoved: real.filesBefore - real.filesUpgraded });
  });

  it('reports an empty table without failing', async () => {
    const table = await createTable({ fields: [{ name: 'id', type: 'INT' }], primaryKeys: ['id'], options: { bucket: '2' } });
    const report = await inspectTable(table);
    expect(report.timeline).toMatchObject({ retained: 0, snapshots: [], latestSnapshotId: null });
    expect(report.liveFiles.files).toBe(0);
    expect(report.manifests.count).toBe(0);
    expect(report.maintenance!.expire).toMatchObject({ status: 'planned', snapshots: 0 });
    expect(report.maintenance!.compaction).toMatchObject({ status: 'planned', mode: 'primary-key', files: 0 });
  });
});
