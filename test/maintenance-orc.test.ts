/**
 * Maintenance and the CLI on the Java-written ORC table (`orc-pk-mor`, ORC data files and ORC
 * manifests), on a temp copy: writes and compaction refuse `file.format = orc` and
 * `manifest.format = orc` by name and leave the table as it was; once the table is altered to
 * Parquet/Avro, compaction rewrites the ORC inputs into Parquet files and Avro manifests; expiration
 * and orphan cleanup work through ORC manifests; `tidemark read`, `files` and `snapshots` work.
 */
import { spawnSync } from 'node:child_process';
import { readdir, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alterTable, openTable, SchemaChanges, type Table } from '@tidemark/core';
import { compactPrimaryKeyTable, expireSnapshots, removeOrphanFiles, verifyTable } from '@tidemark/maintenance';
import { PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, sortedRows, sortedTableRows } from './support/fixture-rows.js';
import { repoRoot, sharedFixturesDir } from './support/fixtures.js';
import { tempCopy } from './support/fixture-copy.js';

const fixtures = sharedFixturesDir('paimon-orc', 'maintenance of ORC tables (maintenance-orc.test.ts)');
const TABLE = join('default.db', 'pk_table_scan_and_read_mor');
const CLI = join(repoRoot, 'packages', 'cli', 'bin', 'tidemark.js');
async function copyTable(): Promise<string> {
  const dir = await tempCopy(join(fixtures!, 'orc-pk-mor'), 'tidemark-orc-');
  return join(dir, TABLE);
}

/** Every file under the table directory (relative), to check that a refused job changed nothing. */
async function listing(location: string): Promise<string[]> {
  const entries = await readdir(location, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(location.length))
    .sort();
}

async function alterOptions(table: Table, options: Record<string, string>): Promise<Table> {
  await alterTable(
    table.fileIO,
    table.paths,
    Object.entries(options).map(([k, v]) => SchemaChanges.setOption(k, v)),
  );
  return openTable(table.location, { fileIO: table.fileIO });
}

describe.skipIf(fixtures === null)('maintenance of a Java-written ORC table', () => {
  it('a write refuses file.format = orc by name and leaves the table as it was', async () => {
    const location = await copyTable();
    const before = await listing(location);
    const table = await openTable(location);
    const write = async () => {
      const w = table.newBatchWrite();
      try {
        await w.write([{ f0: 'Zed', f1: 10, f2: 0, f3: 1.5 }]);
        await table.newCommit().commit({ messages: await w.prepareCommit() });
      } finally {
        await w.close();
      }
    };
    await expect(write()).rejects.toThrow(/'file\.format' = 'orc'/);
    expect(await listing(location)).toEqual(before);
  });

  it('compaction refuses file.format, then manifest.format, and rewrites ORC inputs into Parquet once both allow it', async () => {
    const location = await copyTable();
    const before = await listing(location);
    let table = await openTable(location);
    await expect(compactPrimaryKeyTable(table, { full: true })).rejects.toThrow(/'file\.format' = 'orc'/);
    expect(await listing(location)).toEqual(before);

    table = await alterOptions(table, { 'file.format': 'parquet' });
    const altered = await listing(location);
    await expect(compactPrimaryKeyTable(table, { full: true })).rejects.toThrow(/'manifest\.format' = 'orc'/);
    expect(await listing(location)).toEqual(altered);
    expect(await table.snapshotManager.latestId()).toBe(5);

    table = await alterOptions(table, { 'manifest.format': 'avro' });
    const summary = await compactPrimaryKeyTable(table, { full: true });
    expect(summary.snapshotId).toBe(6);
    expect(sortedTableRows(await table.newRead().toArrowTable())).toEqual(sortedRows(PK_MOR_LATEST));
    expect(sortedTableRows(await table.newRead({ snapshotId: 2 }).toArrowTable())).toEqual(sortedRows(PK_MOR_SNAPSHOT_2));
    const plan = await table.newRead().plan();
    const names = plan.splits.flatMap((s) => s.files.map((f) => f.meta.fileName));
    // Merged outputs are Parquet; files that only moved up a level keep their ORC name.
    expect(names.some((n) => n.endsWith('.parquet'))).toBe(true);
    expect(names.every((n) => n.endsWith('.parquet') || n.endsWith('.orc'))).toBe(true);
    // The new manifest list is Avro, its predecessors stay ORC, and both are read.
    const snapshot = await table.snapshotManager.snapshot(6);
    const bytes = await table.fileIO.read(table.paths.manifestPath(snapshot.deltaManifestList));
    expect(Buffer.from(bytes.subarray(0, 3)).toString('latin1')).toBe('Obj');
  });

  it('expiration and orphan cleanup read the ORC manifests and keep what live snapshots need', async () => {
    const location = await copyTable();
    const table = await openTable(location);
    const expired = await expireSnapshots(table, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() });
    expect(expired.snapshotsExpired).toBe(4);
    expect(expired.filesDeleted).toBeGreaterThan(0);
    expect(await table.snapshotManager.earliestId()).toBe(5);
    expect(sortedTableRows(await table.newRead().toArrowTable())).toEqual(sortedRows(PK_MOR_LATEST));
    const before = await listing(location);
    const orphans = await removeOrphanFiles(table, { olderThanMs: Date.now() });
    expect(orphans.filesDeleted).toBe(0);
    expect(await listing(location)).toEqual(before);
    // Data files only snapshot 2 needed (Tony's, Alice's old value) are gone after expiring it.
    const orcFiles = before.filter((f) => f.endsWith('.orc'));
    expect(orcFiles.length).toBeLessThan(7);
    expect(sortedTableRows(await (await openTable(location)).newRead().toArrowTable())).toEqual(sortedRows(PK_MOR_LATEST));
  });

  it('verify decodes every ORC data file of every snapshot and finds no problem; a truncated file is reported', async () => {
    const location = await copyTable();
    const table = await openTable(location);
    const summary = await verifyTable(table, { all: true });
    expect(summary.problems).toEqual([]);
    expect(summary.ok).toBe(true);
    expect(summary.snapshotsChecked).toEqual([1, 2, 3, 4, 5]);
    expect(summary.dataFilesChecked).toBeGreaterThan(0);
    expect(summary.rowsChecked).toBeGreaterThan(0);
    const victim = join(location, 'f1=20', 'bucket-0', 'data-1bd5fd24-4e7d-4ea2-9436-86df0a54b14a-0.orc');
    await truncate(victim, 400);
    const damaged = await verifyTable(table);
    expect(damaged.ok).toBe(false);
    expect(JSON.stringify(damaged.problems)).toContain('data-1bd5fd24-4e7d-4ea2-9436-86df0a54b14a-0.orc');
  });

  it('tidemark read, files and snapshots work on the ORC table', async () => {
    const location = join(fixtures!, 'orc-pk-mor', TABLE);
    const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    const read = run('read', location);
    expect(read.status, read.stderr).toBe(0);
    const rows = read.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { f0: string; f1: number; f2: number; f3: number });
    expect(sortedRows(rows.map((r) => [r.f0, r.f1, r.f2, r.f3]))).toEqual(sortedRows(PK_MOR_LATEST));
    const files = run('files', location, '--json');
    expect(files.status, files.stderr).toBe(0);
    const listed = files.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const plan = await (await openTable(location)).newRead().plan();
    expect(listed.length).toBe(plan.splits.reduce((n, s) => n + s.files.length, 0));
    expect(listed.every((f) => JSON.stringify(f).includes('.orc'))).toBe(true);
    const snapshots = run('snapshots', location, '--json');
    expect(snapshots.status, snapshots.stderr).toBe(0);
    expect(snapshots.stdout.trim().split('\n').length).toBe(5);
  });
});
