/**
 * Maintenance of deletion-vector tables, on local disk and on the real S3 server: expiration
 * (retaining one snapshot, everything older than now) and orphan cleanup (older than now) keep
 * every DV index file the latest snapshot or a tag references, deleting only those nothing
 * references any more; the latest snapshot and the tag still read as before; `verify` passes, and
 * reports a missing or corrupt DV index file by name. `compactPrimaryKeyTable` (`tidemark compact`)
 * makes the level-0 files of a `write-only` DV table visible, marking replaced rows in vectors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, snapshotIndexEntries, type Table } from '@tidemark/core';
import { INDEX_TYPE_DELETION_VECTORS } from '@tidemark/format';
import { compactPrimaryKeyTable, expireSnapshots, removeOrphanFiles, verifyTable } from '@tidemark/maintenance';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { expectCompactedLiveRows } from './support/deletion-vectors.js';
import { columns } from './support/table-definitions.mjs';

/**
 * Creates and opens `name` in the catalog at `<warehouse root>/<under>`: `k INT NOT NULL` (the
 * primary key) and `v STRING` in one bucket with deletion vectors, `options` on top.
 */
async function dvTable(warehouse: BackendWarehouse, under: string, name: string, options: Record<string, string>): Promise<Table> {
  const catalog = new FileSystemCatalog(`${warehouse.root}/${under}`, { fileIO: warehouse.io });
  await catalog.createTable(name, {
    fields: columns('k INT NOT NULL', 'v STRING'),
    primaryKeys: ['k'],
    options: { bucket: '1', 'deletion-vectors.enabled': 'true', ...options },
  });
  return openTable(catalog.tableLocation(name), { fileIO: warehouse.io });
}

async function dvFiles(table: Table, snapshotId: number): Promise<string[]> {
  const s = await table.snapshotManager.snapshot(snapshotId);
  return (await snapshotIndexEntries(table.fileIO, table.paths, s))
    .filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS)
    .map((e) => e.fileName)
    .sort();
}

async function rows(table: Table, snapshotId: number): Promise<string[]> {
  return (await table.newRead({ snapshotId }).toArrowTable())
    .toArray()
    .map((r) => JSON.stringify(r.toJSON()))
    .sort();
}

async function listIndex(table: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const st of table.fileIO.list(`${table.location}/index`)) out.push(st.path.slice(st.path.lastIndexOf('/') + 1));
  return out.sort();
}

describe.each(storageBackends('dv maintenance'))('maintenance of deletion-vector tables on $name', (backend) => {
  let warehouse: BackendWarehouse | undefined;
  afterAll(async () => {
    if (warehouse) await warehouse.cleanup();
  });

  it.skipIf(!backend.available)(
    'expiration and orphan cleanup keep the DV files live snapshots and tags need; verify checks them',
    async () => {
      warehouse = await backend.open();
      const table = await dvTable(warehouse, 'wh', 'db.t', { 'num-sorted-run.compaction-trigger': '3' });
      for (let w = 0; w < 6; w++) await table.append(Array.from({ length: 10 }, (_, i) => ({ k: (w * 3 + i) % 25, v: `w${w}` })));
      const tagged = (await table.snapshotManager.latestId())!;
      await table.createTag('keep', { snapshotId: tagged });
      const taggedRows = await rows(table, tagged);
      const taggedDv = await dvFiles(table, tagged);
      expect(taggedDv.length).toBeGreaterThan(0);
      for (let w = 6; w < 10; w++) await table.append(Array.from({ length: 10 }, (_, i) => ({ k: (w * 5 + i) % 25, v: `w${w}` })));
      await table.delete([{ k: 1 }, { k: 2 }]);
      const latest = (await table.snapshotManager.latestId())!;
      const latestRows = await rows(table, latest);
      const latestDv = await dvFiles(table, latest);
      const before = await listIndex(table);

      const future = Date.now() + 60_000;
      await expireSnapshots(table, { retainMin: 1, retainMax: 1, olderThanMs: future, expireLimit: 1000 });
      await removeOrphanFiles(table, { olderThanMs: Date.now() });
      const after = await listIndex(table);
      for (const f of [...taggedDv, ...latestDv]) expect(after, `DV file ${f}`).toContain(f);
      // Files only expired snapshots used are gone.
      expect(after.length).toBeLessThan(before.length);
      expect(after.sort()).toEqual([...new Set([...taggedDv, ...latestDv])].sort());

      expect(await rows(table, latest)).toEqual(latestRows);
      const tag = await openTable(table.location, { fileIO: warehouse.io });
      expect(
        (await tag.newRead({ tag: 'keep' }).toArrowTable())
          .toArray()
          .map((r) => JSON.stringify(r.toJSON()))
          .sort(),
      ).toEqual(taggedRows);

      const ok = await verifyTable(table);
      expect(ok.problems).toEqual([]);
      // A DV file that is gone is reported by name.
      const victim = latestDv[0]!;
      await table.fileIO.delete(`${table.location}/index/${victim}`);
      const broken = await verifyTable(table);
      expect(broken.ok).toBe(false);
      expect(broken.problems.some((p) => p.path.endsWith(victim) && /deletion vector index file/.test(p.problem))).toBe(true);
    },
  );

  it.skipIf(!backend.available)('tidemark compact moves the level-0 files of a write-only DV table up with lookups', async () => {
    warehouse ??= await backend.open();
    const table = await dvTable(warehouse, 'wh2', 'db.w', { 'write-only': 'true' });
    const model = new Map<number, string>();
    const expected = (): string[] => [...model].map(([k, v]) => JSON.stringify({ k, v })).sort();
    await table.append(Array.from({ length: 20 }, (_, k) => ({ k, v: 'a' })));
    for (let k = 0; k < 20; k++) model.set(k, 'a');
    // Level 0 only: invisible to batch reads until compacted.
    expect(await rows(table, (await table.snapshotManager.latestId())!)).toEqual([]);
    const first = await compactPrimaryKeyTable(table);
    expect(first.snapshotId).not.toBeNull();
    expect(await rows(table, first.snapshotId!)).toEqual(expected());

    await table.append(Array.from({ length: 5 }, (_, i) => ({ k: i * 3, v: 'b' })));
    for (let i = 0; i < 5; i++) model.set(i * 3, 'b');
    await table.delete([{ k: 1 }, { k: 19 }]);
    model.delete(1);
    model.delete(19);
    const second = await compactPrimaryKeyTable(table);
    expect(second.snapshotId).not.toBeNull();
    expect(await rows(table, second.snapshotId!)).toEqual(expected());
    // The replaced rows stay in their files, marked in vectors; no level 0 is left.
    await expectCompactedLiveRows(table, model.size);
    expect((await dvFiles(table, second.snapshotId!)).length).toBeGreaterThan(0);
    expect((await verifyTable(table)).problems).toEqual([]);
  });
});
