/**
 * Data-file index sidecars (`<data file>.index`, listed in `_EXTRA_FILES`) are live files: on local
 * disk and on the S3 server, each maintenance job keeps a sidecar while its data file is live (in
 * some retained snapshot, tag or branch) and deletes it together with its data file — orphan
 * cleanup, snapshot expiration after compaction, rollback, and a branch that still uses the files;
 * `verify` reports a missing one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '@tidemark/core';
import { compactAppendTable, compactPrimaryKeyTable, expireSnapshots, removeOrphanFiles, verifyTable } from '@tidemark/maintenance';
import { storageBackends, type BackendWarehouse } from './support/backends.js';

// Paimon's default bloom filter (1,000,000 items) is ~600 KB: always a sidecar. 1,000 items keep it small.
const INDEXED = { 'file-index.bloom-filter.columns': 'id', 'file-index.bloom-filter.id.items': '1000' };

async function allFiles(io: FileIO, root: string): Promise<string[]> {
  const out: string[] = [];
  for await (const st of io.list(root, { recursive: true })) out.push(st.path);
  return out;
}

/** Sidecar index files on storage (relative to the table), sorted. */
async function sidecarsOnStorage(io: FileIO, location: string): Promise<string[]> {
  return (await allFiles(io, location))
    .filter((p) => p.endsWith('.parquet.index'))
    .map((p) => p.slice(p.indexOf(location) + location.length))
    .sort();
}

/** Sidecars of the live files of `table`'s latest snapshot (relative to the table), sorted. */
async function liveSidecars(table: Table, location: string, snapshotId?: number): Promise<string[]> {
  const plan = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).plan();
  const out: string[] = [];
  for (const split of plan.splits) {
    for (const f of split.files) {
      expect(f.meta.extraFiles, `${f.meta.fileName} has its sidecar`).toEqual([`${f.meta.fileName}.index`]);
      const path = `${f.path}.index`;
      out.push(path.slice(path.indexOf(location) + location.length));
    }
  }
  return out.sort();
}

/** `n` rows with ids `from`, `from + step`, …: interleaved ids keep absent ones inside each file's min/max. */
const rows = (from: number, n: number, step = 1): Array<{ id: number; v: string }> =>
  Array.from({ length: n }, (_, i) => ({ id: from + i * step, v: `v${from + i * step}` }));

describe.each(storageBackends('file index maintenance'))('file index sidecars in maintenance on $name', (backend) => {
  let wh: BackendWarehouse;
  let n = 0;
  beforeAll(async () => {
    if (backend.available) wh = await backend.open();
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  async function table(spec: Partial<TableSpec>): Promise<{ table: Table; location: string }> {
    const catalog = new FileSystemCatalog(`${wh.root}/m${++n}`, { fileIO: wh.io });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      ...spec,
      options: { 'write-only': 'true', ...INDEXED, ...spec.options },
    });
    const location = catalog.tableLocation('db.t');
    return { table: await openTable(location, { fileIO: wh.io }), location };
  }

  it.skipIf(!backend.available)('orphan cleanup keeps live sidecars and removes a stray one', async () => {
    const { table: t, location } = await table({});
    await t.append(rows(0, 10));
    await t.append(rows(10, 10));
    const live = await liveSidecars(t, location);
    expect(live).toHaveLength(2);
    const dataDir = live[0]!.slice(0, live[0]!.lastIndexOf('/') + 1);
    const stray = `${location}${dataDir}data-00000000-0000-4000-8000-000000000000-0.parquet.index`;
    await wh.io.write(stray, new Uint8Array(16));
    await new Promise((r) => setTimeout(r, 1100));
    const summary = await removeOrphanFiles(t, { olderThanMs: Date.now() - 1 });
    expect(summary.filesDeleted).toBeGreaterThanOrEqual(1);
    expect(await sidecarsOnStorage(wh.io, location)).toEqual(live);
    expect((await t.newRead({ where: 'id = 15' }).toArrowTable()).numRows).toBe(1);
  });

  it.skipIf(!backend.available)('compaction writes indexed files; expiration deletes the replaced files with their sidecars', async () => {
    const { table: t, location } = await table({ primaryKeys: ['id'], options: { bucket: '1' } });
    for (let i = 0; i < 4; i++) await t.append(rows(i * 10, 8, 2));
    const before = await liveSidecars(t, location);
    expect(before).toHaveLength(4);
    await compactPrimaryKeyTable(t, { full: true });
    const after = await liveSidecars(t, location);
    expect(after).toHaveLength(1);
    expect(after.some((s) => before.includes(s))).toBe(false);
    // Until expiration the replaced files are still in retained snapshots: all sidecars stay.
    expect(await sidecarsOnStorage(wh.io, location)).toEqual([...before, ...after].sort());
    await expireSnapshots(t, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 });
    expect(await sidecarsOnStorage(wh.io, location)).toEqual(after);
    const read = t.newRead({ where: 'id = 3' });
    expect((await read.toArrowTable()).numRows).toBe(0);
    expect(read.fileIndexStats.filesSkipped).toBe(1);
  });

  it.skipIf(!backend.available)('rollback deletes the sidecars of the files it drops; a branch keeps the files it uses', async () => {
    const { table: t, location } = await table({});
    await t.append(rows(0, 5, 2));
    const atOne = await liveSidecars(t, location);
    await t.append(rows(1, 5, 2));
    const atTwo = await liveSidecars(t, location);
    await t.append(rows(10, 5));
    const atThree = await liveSidecars(t, location);
    expect(atThree).toHaveLength(3);
    // A branch from snapshot 2 shares its files: they (and their sidecars) must outlive the rollback.
    await t.createTag('at2', { snapshotId: 2 });
    await t.branches().create('b', { tag: 'at2' });
    await t.rollbackTo(1, { force: true });
    expect(await liveSidecars(t, location)).toEqual(atOne);
    // Snapshot 3's own file was in no branch or tag: gone with its sidecar.
    expect(await sidecarsOnStorage(wh.io, location)).toEqual(atTwo);
    const branch = await openTable(location, { fileIO: wh.io, branch: 'b' });
    const read = branch.newRead({ where: 'id = 7' });
    expect((await read.toArrowTable()).numRows).toBe(1);
    // Of the two files, the one of even ids is ruled out by its sidecar.
    expect(read.fileIndexStats.filesSkipped).toBe(1);
  });

  it.skipIf(!backend.available)('verify checks that each sidecar exists and decodes', async () => {
    const { table: t, location } = await table({});
    await t.append(rows(0, 5));
    expect((await verifyTable(t)).ok).toBe(true);
    const [sidecar] = await liveSidecars(t, location);
    await wh.io.delete(`${location}${sidecar}`);
    const summary = await verifyTable(t, { metadataOnly: true });
    expect(summary.ok).toBe(false);
    expect(summary.problems.map((p) => p.problem).join('\n')).toMatch(/file index .*\.index.*missing/);
  });

  it.skipIf(!backend.available)('append compaction replaces sidecars like data files (expiration removes the old ones)', async () => {
    const { table: t, location } = await table({});
    for (let i = 0; i < 4; i++) await t.append(rows(i * 5, 5));
    const before = await liveSidecars(t, location);
    await compactAppendTable(t, { full: true });
    const after = await liveSidecars(t, location);
    expect(after.length).toBeLessThan(before.length);
    await expireSnapshots(t, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 });
    expect(await sidecarsOnStorage(wh.io, location)).toEqual(after);
  });
});
