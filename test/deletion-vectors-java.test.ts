/**
 * tidemark continues the Java-written deletion-vector table `pk-dv` (2 buckets, partitioned by
 * f1), on local disk and on the real S3 server: upserts and a delete into every bucket that holds
 * level-0 files compact them up (batch reads skip level 0), marking replaced rows in deletion
 * vectors. The table then reads exactly as the model says (Java's rows of all six snapshots, the
 * level-0 rows of snapshots 5/6 included now, plus our changes), every earlier snapshot still
 * reads as before, and our index manifest entries and DV index files have the shape Java's have,
 * field by field (Java's pk-dv entries of snapshot 4 are the reference).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  INDEX_TYPE_DELETION_VECTORS,
  MutableDeletionVector,
  decodeDeletionVectorFile,
  encodeDeletionVectorFile,
  readIndexManifest,
  type IndexManifestEntry,
} from '@tidemark/format';
import type { Table } from '@tidemark/core';
import { storageBackends } from './support/backends.js';
import { fixturesDir } from './support/fixtures.js';
import { copyFixtureForSuite } from './support/fixture-copy.js';
import { PK_MOR_LATEST, type PkMorRow } from './support/fixture-rows.js';
import { expectCompactedLiveRows } from './support/deletion-vectors.js';

const TABLE = 'default.db/pk_table_scan_and_read_dv';
const fixtures = fixturesDir('continuing the Java deletion-vector table');

const keyOf = (r: PkMorRow): string => `${r[0]}|${r[1]}|${r[2]}`;
const sortRows = (rows: PkMorRow[]): PkMorRow[] => [...rows].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));

async function rows(table: Table, snapshotId?: number): Promise<PkMorRow[]> {
  const t = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  return sortRows(t.toArray().map((r) => [r.f0, r.f1, r.f2, r.f3] as PkMorRow));
}

async function dvEntries(table: Table, snapshotId: number): Promise<IndexManifestEntry[]> {
  const s = await table.snapshotManager.snapshot(snapshotId);
  if (!s.indexManifest) return [];
  return (await readIndexManifest(table.fileIO, table.paths.manifestPath(s.indexManifest))).filter(
    (e) => e.indexType === INDEX_TYPE_DELETION_VECTORS,
  );
}

describe.each(storageBackends('dv java tables'))('continuing the Java pk-dv table on $name', (backend) => {
  let table: Table;
  const enabled = backend.available && fixtures !== null;

  copyFixtureForSuite(
    backend,
    enabled,
    () => join(fixtures!, 'pk-dv', TABLE),
    'pk-dv',
    (copy) => (table = copy.table),
  );

  it.skipIf(!enabled)('upserts and deletes read as the model; our DV entries and files are shaped as Java writes them', async () => {
    const before = new Map<number, PkMorRow[]>();
    for (let id = 1; id <= 6; id++) before.set(id, await rows(table, id));
    const javaEntries = await dvEntries(table, 6);
    expect(javaEntries.length).toBe(2);

    // One row into each bucket of f1=10 (bucket-key f2: f2=1 -> bucket 0, f2=0 -> bucket 1) and a
    // delete in f1=20: every bucket with level-0 files is written, so all are compacted.
    const model = new Map(PK_MOR_LATEST.map((r) => [keyOf(r), r]));
    const upserts: PkMorRow[] = [
      ['Alice', 10, 1, 99.0],
      ['Bob', 10, 0, 55.5],
      ['Zoe', 20, 1, 1.5],
    ];
    const w1 = await table.append(upserts.map(([f0, f1, f2, f3]) => ({ f0, f1, f2, f3 })));
    for (const r of upserts) model.set(keyOf(r), r);
    expect(w1).toMatchObject({ status: 'committed', snapshotIds: [7, 8] });
    const w2 = await table.delete([{ f0: 'Paul', f1: 20, f2: 1 }]);
    expect(w2.deleted).toBe(1);
    model.delete(keyOf(['Paul', 20, 1, 0]));
    const latest = (await table.snapshotManager.latestId())!;
    expect(await rows(table, latest)).toEqual(sortRows([...model.values()]));
    // Java's snapshots read as they did; our APPEND snapshot 7 reads as snapshot 6 (level 0 skipped).
    for (const [id, expected] of before) expect(await rows(table, id), `snapshot ${id}`).toEqual(expected);
    expect(await rows(table, 7)).toEqual(before.get(6));

    // No level-0 file is left, and the vectors delete exactly the replaced rows.
    const plan = await expectCompactedLiveRows(table, model.size);

    // Field by field against Java's entries of the same table.
    const ours = (await dvEntries(table, latest)).filter((e) => !javaEntries.some((j) => j.fileName === e.fileName));
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.some((e) => (e.dvRanges ?? []).length > 0)).toBe(true);
    const java = javaEntries[0]!;
    expect(plan.splits.some((sp) => sp.partition.join() === java.partition.join() && sp.bucket === java.bucket)).toBe(true);
    for (const e of ours) {
      expect(Object.keys(e).sort()).toEqual(Object.keys(java).sort());
      expect(e.kind).toBe(java.kind);
      expect(e.fileName).toMatch(/^index-[0-9a-f-]{36}-\d+$/);
      expect(e.externalPath).toBe(java.externalPath);
      expect(e.globalIndex).toBe(java.globalIndex);
      expect(e.rowCount).toBe(e.dvRanges!.length);
      expect(java.rowCount).toBe(java.dvRanges!.length);
      // Partitions serialized as in the data manifests (Java's entries use the same bytes).
      expect(plan.splits.some((sp) => sp.partition.join() === e.partition.join() && sp.bucket === e.bucket)).toBe(true);
      const bytes = await table.fileIO.read(table.paths.indexPath(e.fileName));
      expect(bytes.length).toBe(e.fileSize);
      expect(bytes[0]).toBe(1);
      let offset = 1;
      for (const r of e.dvRanges!) {
        expect(r.offset).toBe(offset);
        expect(typeof r.cardinality).toBe(typeof java.dvRanges![0]!.cardinality);
        offset += 8 + r.length;
      }
      // Re-encoding what we wrote gives the same bytes, as it does for Java's files.
      const decoded = decodeDeletionVectorFile(bytes, e.dvRanges!, e.fileName);
      const again = encodeDeletionVectorFile([...decoded].map(([n, dv]) => [n, MutableDeletionVector.copyOf(dv)] as const));
      expect(Buffer.from(again.bytes).equals(Buffer.from(bytes))).toBe(true);
    }
    // The COMPACT snapshots carry the DV changes, as Java's snapshot 4 does.
    expect((await table.snapshotManager.snapshot(8)).commitKind).toBe('COMPACT');
    expect((await table.snapshotManager.snapshot(8)).indexManifest).not.toBe((await table.snapshotManager.snapshot(7)).indexManifest);
  });
});
