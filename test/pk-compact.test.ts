/**
 * Primary-key compaction across packages: the Java-written pk-mor fixture, copied to a temp
 * directory, takes a tidemark full compaction and then reads exactly the fixture's expected rows
 * (at the compacted snapshot and, by time travel, at snapshot 2); the compacted files sit in the
 * top level, which `tidemark files` shows. The same on the real S3 server when configured.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO, S3FileIO, type FileIO } from '@tidemark/storage';
import { openTable } from '@tidemark/core';
import { FILE_SOURCE_COMPACT } from '@tidemark/format';
import { compactPrimaryKeyTable } from '@tidemark/maintenance';
import { PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, sortedRows, sortedTableRows } from './support/fixture-rows.js';
import { fixturesDir, repoRoot } from './support/fixtures.js';
import { s3Available, s3TestOptions, s3TestRoot } from './support/s3.js';
import { deltaEntries } from './support/manifest-entries.js';

const fixtures = fixturesDir('primary-key compaction of the pk-mor fixture');
const TABLE = join('default.db', 'pk_table_scan_and_read_mor');
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function checkCompacted(location: string, io: FileIO): Promise<void> {
  const table = await openTable(location, { fileIO: io });
  const summary = await compactPrimaryKeyTable(table, { full: true });
  // Snapshots 1..5 exist; the compaction is snapshot 6.
  expect(summary.snapshotId).toBe(6);
  expect(summary.windows).toBeGreaterThan(0);
  expect((await table.snapshotManager.snapshot(6)).commitKind).toBe('COMPACT');
  expect(sortedTableRows(await table.newRead().toArrowTable())).toEqual(sortedRows(PK_MOR_LATEST));
  expect(sortedTableRows(await table.newRead({ snapshotId: 5 }).toArrowTable())).toEqual(sortedRows(PK_MOR_LATEST));
  expect(sortedTableRows(await table.newRead({ snapshotId: 2 }).toArrowTable())).toEqual(sortedRows(PK_MOR_SNAPSHOT_2));
  const plan = await table.newRead().plan();
  for (const split of plan.splits) {
    expect(split.files.map((f) => f.meta.level)).toEqual(split.files.map(() => 5));
    for (const f of split.files) expect(f.meta.deleteRowCount).toBe(0);
  }
  // Deleted keys are gone from the files, not only from the read: 11 rows in total.
  expect(plan.rowCount).toBe(PK_MOR_LATEST.length);

  // Field by field like Java's own COMPACT snapshot (3): merged outputs at level 5 with file
  // source COMPACT (1); files that only moved keep their name and source, as Java's upgrade does.
  const java = await deltaEntries(table, 3);
  const ours = await deltaEntries(table, 6);
  const javaAdd = java.find((e) => e.kind === 'ADD' && e.file.fileSource === FILE_SOURCE_COMPACT)!;
  expect(
    java.some(
      (e) => e.kind === 'ADD' && e.file.fileSource === 0 && java.some((d) => d.kind === 'DELETE' && d.file.fileName === e.file.fileName),
    ),
  ).toBe(true);
  const deleted = new Map(ours.filter((e) => e.kind === 'DELETE').map((e) => [e.file.fileName, e.file]));
  const added = ours.filter((e) => e.kind === 'ADD');
  expect(added.length).toBeGreaterThan(0);
  for (const e of added) {
    expect(Object.keys(e.file).sort()).toEqual(Object.keys(javaAdd.file).sort());
    expect(e.file.level).toBe(5);
    expect(e.totalBuckets).toBe(2);
    const input = deleted.get(e.file.fileName);
    expect(e.file.fileSource).toBe(input === undefined ? FILE_SOURCE_COMPACT : input.fileSource);
    if (input === undefined) expect(e.file.keyStats.nullCounts).toEqual(javaAdd.file.keyStats.nullCounts);
  }
}

describe.skipIf(fixtures === null)('full compaction of the Java-written pk-mor table', () => {
  it('reads the fixture rows afterwards, at the new and at older snapshots, with files in the top level', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-pk-compact-'));
    dirs.push(dir);
    await cp(join(fixtures!, 'pk-mor'), dir, { recursive: true });
    const location = join(dir, TABLE);
    await checkCompacted(location, new LocalFileIO());

    // `tidemark files` lists the level of each file.
    const cli = join(repoRoot, 'packages', 'cli', 'bin', 'tidemark.js');
    const run = spawnSync(process.execPath, [cli, 'files', location, '--json'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const files = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number });
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((f) => f.level === 5)).toBe(true);
  });

  it.skipIf(!s3Available('primary-key compaction on S3'))('on the real S3 server', async () => {
    const root = s3TestRoot('pk-compact');
    const io = new S3FileIO(s3TestOptions());
    const src = join(fixtures!, 'pk-mor');
    const upload = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) await upload(p);
        else await io.write(`${root}/${relative(src, p)}`, await readFile(p));
      }
    };
    await upload(src);
    try {
      await checkCompacted(`${root}/default.db/pk_table_scan_and_read_mor`, io);
    } finally {
      await io.close();
    }
  });
});
