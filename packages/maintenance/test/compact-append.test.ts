import { describe, expect, it } from 'vitest';
import { FILE_SOURCE_COMPACT } from '@tidemark/format';
import { SchemaChanges, alterTable, openTable, type Table } from '@tidemark/core';
import { compactAppendTable, compactManifests, MaintenanceArgumentError, pickCompactWindows } from '../src/index.js';
import {
  TYPED_SPEC,
  checksum,
  createTable,
  filesOfAllSnapshots,
  hookedFileIO,
  liveFiles,
  manifestCount,
  parquetFilesOnDisk,
  tableRows,
  typedRow,
} from './compact-helpers.js';

/** `commits` appends; each writes `perCommit` rows into every partition of `partitions` (one file each). */
async function fill(table: Table, partitions: readonly string[], commits: number, perCommit = 3, idBase = 0): Promise<number> {
  let id = idBase;
  for (let c = 0; c < commits; c++) {
    const rows = [];
    for (const dt of partitions) for (let k = 0; k < perCommit; k++) rows.push(typedRow(id++, dt));
    await table.append(rows);
  }
  return id;
}

function byPartition(files: readonly string[], dt: string): string[] {
  return files.filter((f) => f.startsWith(`dt=${dt}/`));
}

describe('pickCompactWindows', () => {
  const f = (size: number, seq: number) => ({ fileSize: size, minSequenceNumber: BigInt(seq) });
  it('packs small files by sequence order into windows of at least min-file-num, up to the target size', () => {
    const files = [f(30, 40), f(30, 0), f(30, 10), f(30, 20), f(30, 30), f(30, 50), f(30, 60), f(30, 70), f(30, 80), f(30, 90), f(30, 100)];
    const windows = pickCompactWindows(files, { targetFileSize: 150, smallFileRatio: 0.7, minFileNum: 5 });
    expect(windows.map((w) => w.map((x) => Number(x.minSequenceNumber)))).toEqual([
      [0, 10, 20, 30, 40],
      [50, 60, 70, 80, 90],
    ]);
  });
  it('skips files at or above target × ratio, and needs min-file-num files unless full', () => {
    const files = [f(70, 0), f(10, 1), f(10, 2), f(10, 3)];
    const opts = { targetFileSize: 100, smallFileRatio: 0.7, minFileNum: 5 };
    expect(pickCompactWindows(files, opts)).toEqual([]);
    expect(pickCompactWindows(files, { ...opts, full: true }).map((w) => w.length)).toEqual([3]);
  });
  it('slides the window when few files already reach twice the target size', () => {
    // 0..3 reach 2x target with 4 files: 0 is dropped; 1..5 then has min-file-num files and 6 would
    // exceed the target, so the window closes; 6..7 stay (fewer than min-file-num).
    const files = [f(65, 0), f(65, 1), f(65, 2), f(65, 3), f(1, 4), f(1, 5), f(1, 6), f(1, 7)];
    const windows = pickCompactWindows(files, { targetFileSize: 100, smallFileRatio: 0.7, minFileNum: 5 });
    expect(windows.map((w) => w.map((x) => Number(x.minSequenceNumber)))).toEqual([[1, 2, 3, 4, 5]]);
  });
});

describe('compactAppendTable (local disk)', () => {
  it('rewrites small files into fewer files with exactly the same rows and a COMPACT snapshot', async () => {
    const table = await createTable(TYPED_SPEC);
    const ids = await fill(table, ['a', 'b'], 8, 4);
    const before = await checksum(table);
    const filesBefore = await liveFiles(table);
    expect(filesBefore).toHaveLength(16);
    const planBefore = await table.newRead().plan();
    const seqRange = (dt: string) => {
      const split = planBefore.splits.find((s) => s.partitionSpec.dt === dt)!;
      return [
        split.files.reduce((m, x) => (x.meta.minSequenceNumber < m ? x.meta.minSequenceNumber : m), 1n << 62n),
        split.files.reduce((m, x) => (x.meta.maxSequenceNumber > m ? x.meta.maxSequenceNumber : m), -1n),
      ];
    };
    const previous = (await table.snapshotManager.latest())!;

    const summary = await compactAppendTable(table);
    expect(summary.filesBefore).toBe(16);
    expect(summary.filesAfter).toBe(2);
    expect(summary.partitions).toBe(2);
    expect(summary.snapshotId).toBe(previous.id + 1);
    expect(summary.gaveUp).toBeUndefined();
    expect(summary.rows).toBe(ids);

    const after = await checksum(table);
    expect(after).toEqual(before);
    expect(after.rows).toBe(ids);
    const snapshot = (await table.snapshotManager.latest())!;
    expect(snapshot.commitKind).toBe('COMPACT');
    expect(snapshot.deltaRecordCount).toBe(0);
    expect(snapshot.totalRecordCount).toBe(previous.totalRecordCount);
    const plan = await table.newRead().plan();
    expect(plan.files()).toHaveLength(2);
    for (const split of plan.splits) {
      const [min, max] = seqRange(split.partitionSpec.dt!);
      const file = split.files[0]!.meta;
      expect(file.level).toBe(0);
      expect(file.fileSource).toBe(FILE_SOURCE_COMPACT);
      // Java's compactRewrite numbers the output rows from the inputs' smallest sequence number;
      // the range also covers every input's range.
      expect(file.minSequenceNumber).toBe(min);
      const numbered = min! + BigInt(file.rowCount) - 1n;
      expect(file.maxSequenceNumber).toBe(numbered > max! ? numbered : max);
    }
    // A fresh handle (new schema/snapshot caches) reads the same rows.
    expect(await checksum(await openTable(table.location, { fileIO: table.fileIO }))).toEqual(before);
    // A later append starts its own sequence at 0, as Java's bucket-unaware writer does (it ignores
    // previous files), and its rows read back next to the compacted ones.
    await table.append([typedRow(ids, 'a')]);
    const files = (await table.newRead({ partition: { dt: 'a' } }).plan()).files();
    expect(files).toHaveLength(2);
    const appended = files.find((f) => f.fileName !== plan.splits.find((s) => s.partitionSpec.dt === 'a')!.files[0]!.meta.fileName)!;
    expect(appended.minSequenceNumber).toBe(0n);
    expect((await checksum(table)).rows).toBe(ids + 1);
    // Nothing left to do.
    const again = await compactAppendTable(table);
    expect(again.snapshotId).toBeNull();
    expect(again.windows).toBe(0);
  });

  it('reads each file with its own schema (rename, widen, add) and writes the latest schema', async () => {
    const table = await createTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'v', type: 'STRING' },
        { name: 'n', type: 'INT' },
      ],
    });
    for (let c = 0; c < 3; c++) await table.append([{ id: c, v: `v${c}`, n: c * 1000 }]);
    await alterTable(table.fileIO, table.paths, [
      SchemaChanges.renameColumn('v', 'label'),
      SchemaChanges.alterType('n', 'BIGINT'),
      SchemaChanges.addColumn('extra', 'STRING'),
    ]);
    const evolved = await openTable(table.location, { fileIO: table.fileIO });
    for (let c = 3; c < 5; c++) await evolved.append([{ id: c, label: `v${c}`, n: 2n ** 40n + BigInt(c), extra: `e${c}` }]);
    const before = await tableRows(evolved);
    expect(before).toHaveLength(5);
    const summary = await compactAppendTable(evolved);
    expect(summary.filesBefore).toBe(5);
    expect(await tableRows(evolved)).toEqual(before);
    const files = (await evolved.newRead().plan()).files();
    expect(files).toHaveLength(1);
    expect(files[0]!.schemaId).toBe(1);
  });

  it('restricts work to a partition (by spec or partition-only where) and rejects non-partition filters', async () => {
    const table = await createTable(TYPED_SPEC);
    await fill(table, ['a', 'b', 'c'], 6, 2);
    const before = await checksum(table);
    const files = await liveFiles(table);

    const s1 = await compactAppendTable(table, { partition: { dt: 'a' } });
    expect(s1.partitions).toBe(1);
    expect(s1.filesBefore).toBe(6);
    const after1 = await liveFiles(table);
    expect(byPartition(after1, 'a')).toHaveLength(1);
    expect(byPartition(after1, 'b')).toEqual(byPartition(files, 'b'));
    expect(byPartition(after1, 'c')).toEqual(byPartition(files, 'c'));

    const s2 = await compactAppendTable(table, { where: "dt = 'c'" });
    expect(s2.filesBefore).toBe(6);
    const after2 = await liveFiles(table);
    expect(byPartition(after2, 'b')).toEqual(byPartition(files, 'b'));
    expect(byPartition(after2, 'c')).toHaveLength(1);
    expect(await checksum(table)).toEqual(before);

    await expect(compactAppendTable(table, { where: 'id > 3' })).rejects.toBeInstanceOf(MaintenanceArgumentError);
  });

  it('dry run reports the plan and changes nothing; maxFilesPerRun bounds a run; full compacts below min-file-num', async () => {
    const table = await createTable(TYPED_SPEC);
    await fill(table, ['a', 'b'], 6, 1);
    await fill(table, ['c'], 3, 1, 1000);
    const files = await liveFiles(table);
    const onDisk = await parquetFilesOnDisk(table);
    const latest = await table.snapshotManager.latestId();

    const dry = await compactAppendTable(table, { dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.snapshotId).toBeNull();
    expect(dry.plan).toHaveLength(2);
    expect(dry.plan!.map((w) => w.files.length)).toEqual([6, 6]);
    expect(dry.filesBefore).toBe(12);
    expect(await table.snapshotManager.latestId()).toBe(latest);
    expect(await liveFiles(table)).toEqual(files);
    expect(await parquetFilesOnDisk(table)).toEqual(onDisk);

    const bounded = await compactAppendTable(table, { maxFilesPerRun: 8 });
    expect(bounded.windows).toBe(1);
    expect(bounded.remainingWindows).toBe(1);
    expect(bounded.filesBefore).toBeLessThanOrEqual(8);

    const rest = await compactAppendTable(table);
    expect(rest.windows).toBe(1);
    const cFiles = (t: string[]) => byPartition(t, 'c');
    expect(cFiles(await liveFiles(table))).toHaveLength(3); // 3 < compaction.min.file-num
    const full = await compactAppendTable(table, { full: true });
    expect(full.filesBefore).toBe(3);
    expect(cFiles(await liveFiles(table))).toHaveLength(1);
  });

  it('compaction racing appends keeps every appended row exactly once', async () => {
    const table = await createTable(TYPED_SPEC);
    let next = await fill(table, ['a', 'b'], 6, 20);
    const appended: string[] = [];
    const appender = (async () => {
      for (let c = 0; c < 12; c++) {
        const rows = [typedRow(next++, 'a'), typedRow(next++, 'b')];
        appended.push(...rows.map((r) => String(r.id)));
        await table.append(rows);
      }
    })();
    const [summary] = await Promise.all([compactAppendTable(table), appender]);
    expect(summary.snapshotId !== null || summary.gaveUp !== undefined).toBe(true);
    const ids = (await tableRows(table)).map((r) => (JSON.parse(r) as string[])[0]!);
    expect(ids).toHaveLength(next);
    expect(new Set(ids).size).toBe(next);
    for (let i = 0; i < next; i++) expect(ids).toContain(`${i}n`);
  });

  it('rebases onto an append committed during its commit', async () => {
    const base = await createTable(TYPED_SPEC);
    const next = await fill(base, ['a'], 6, 5);
    const io = hookedFileIO(base.fileIO, async () => {
      await base.append([typedRow(next, 'a')]);
    });
    const table = await openTable(base.location, { fileIO: io });
    const summary = await compactAppendTable(table);
    expect(summary.snapshotId).not.toBeNull();
    expect(summary.gaveUp).toBeUndefined();
    const snapshot = (await base.snapshotManager.latest())!;
    expect(snapshot.commitKind).toBe('COMPACT');
    expect(snapshot.id).toBe(8); // 6 appends, the racing append, then the compaction
    expect((await checksum(base)).rows).toBe(next + 1);
    expect(await liveFiles(base)).toHaveLength(2);
  });

  it('gives up cleanly when a concurrent overwrite removed its inputs, and keeps the other windows', async () => {
    const base = await createTable(TYPED_SPEC);
    const next = await fill(base, ['a', 'b'], 6, 3);
    const replacement = [typedRow(next, 'a'), typedRow(next + 1, 'a')];
    const io = hookedFileIO(base.fileIO, async () => {
      await base.overwrite(replacement, { partition: { dt: 'a' } });
    });
    const table = await openTable(base.location, { fileIO: io });
    const summary = await compactAppendTable(table);
    expect(summary.gaveUp).toBeDefined();
    expect(summary.gaveUp!.windows).toBe(1);
    expect(summary.gaveUp!.outputFilesDeleted).toBe(1);
    expect(summary.snapshotId).not.toBeNull(); // partition b was still compacted
    expect(summary.windows).toBe(1);

    const rows = (await tableRows(base)).map((r) => JSON.parse(r) as unknown[]);
    expect(rows.filter((r) => r[1] === 'a').map((r) => r[0])).toEqual([`${next}n`, `${next + 1}n`]);
    expect(rows.filter((r) => r[1] === 'b')).toHaveLength(18);
    const files = await liveFiles(base);
    expect(byPartition(files, 'a')).toHaveLength(1);
    expect(byPartition(files, 'b')).toHaveLength(1);
    // No data file on disk that no snapshot references: the lost window's outputs were deleted.
    const referenced = await filesOfAllSnapshots(base);
    for (const name of await parquetFilesOnDisk(base)) expect(referenced.has(name)).toBe(true);
  });

  it('gives up entirely when every input is gone', async () => {
    const base = await createTable(TYPED_SPEC);
    await fill(base, ['a'], 5, 2);
    const io = hookedFileIO(base.fileIO, async () => {
      await compactAppendTable(base, { commitUser: 'other-compactor' });
    });
    const table = await openTable(base.location, { fileIO: io });
    const before = await checksum(base);
    const summary = await compactAppendTable(table);
    expect(summary.snapshotId).toBeNull();
    expect(summary.gaveUp?.windows).toBe(1);
    expect(summary.filesAfter).toBe(0);
    expect(await checksum(base)).toEqual(before);
    expect((await base.snapshotManager.latest())!.commitUser).toBe('other-compactor');
    const referenced = await filesOfAllSnapshots(base);
    for (const name of await parquetFilesOnDisk(base)) expect(referenced.has(name)).toBe(true);
  });

  it('refuses primary-key tables', async () => {
    const table = await createTable({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1' },
    });
    await expect(compactAppendTable(table)).rejects.toBeInstanceOf(MaintenanceArgumentError);
  });
});

describe('compactManifests (local disk)', () => {
  it('merges the manifests of the latest snapshot into fewer, keeping the file set and rows', async () => {
    const table = await createTable(TYPED_SPEC);
    await fill(table, ['a', 'b'], 12, 1);
    await compactAppendTable(table, { partition: { dt: 'a' } }); // DELETE entries in the manifests
    const before = await checksum(table);
    const files = await liveFiles(table);
    const manifests = await manifestCount(table);
    expect(manifests).toBeGreaterThan(3);
    const previous = (await table.snapshotManager.latest())!;

    const summary = await compactManifests(table);
    expect(summary.manifestsBefore).toBe(manifests);
    expect(summary.snapshotId).toBe(previous.id + 1);
    expect(summary.manifestsAfter).toBe(1);
    expect(await manifestCount(table)).toBe(1);
    const snapshot = (await table.snapshotManager.latest())!;
    expect(snapshot.commitKind).toBe('COMPACT');
    expect(snapshot.deltaRecordCount).toBe(0);
    expect(snapshot.totalRecordCount).toBe(previous.totalRecordCount);
    expect(await liveFiles(table)).toEqual(files);
    expect(await checksum(table)).toEqual(before);
    // Older snapshots still read (their manifests were not touched).
    expect((await table.newRead({ snapshotId: previous.id }).plan()).files()).toHaveLength(files.length);

    const again = await compactManifests(table);
    expect(again.snapshotId).toBeNull();
    expect(again.manifestsAfter).toBe(1);
  });

  it('does nothing on an empty table', async () => {
    const table = await createTable(TYPED_SPEC);
    expect((await compactManifests(table)).snapshotId).toBeNull();
  });
});
