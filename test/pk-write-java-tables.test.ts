/**
 * tidemark continues the Java-written primary-key table `pk-mor` (deduplicate, 2 fixed buckets,
 * partitioned by f1): a copy takes upserts, row-kind deletes and Table.delete (by key and by
 * predicate), on local disk and on the real S3 server. Every snapshot, the five Java ones included,
 * reads back exactly as the model says, and the new manifest entries carry the fields Java writes
 * (level 0, APPEND source, min/max key and full key stats as BinaryRow, sequence numbers that
 * continue each bucket's highest live one).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deserializeBinaryRow, type DataType, type ManifestEntry } from '@tidemark/format';
import { openTable, type CommitResult, type Table } from '@tidemark/core';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { fixturesDir } from './support/fixtures.js';
import { copyFixtureForSuite, copyTree } from './support/fixture-copy.js';
import { PK_MOR_LATEST, TWO_ROADS, type PkMorRow } from './support/fixture-rows.js';
import { deltaEntries } from './support/manifest-entries.js';

const TABLE = 'default.db/pk_table_scan_and_read_mor';
const STR: DataType = { root: 'VARCHAR', nullable: false, length: 2147483647 } as DataType;
const INT: DataType = { root: 'INT', nullable: false };
const DOUBLE: DataType = { root: 'DOUBLE', nullable: true };

const keyOf = (r: PkMorRow): string => `${r[0]}|${r[1]}|${r[2]}`;

async function rows(table: Table, snapshotId: number): Promise<PkMorRow[]> {
  const t = await table.newRead({ snapshotId }).toArrowTable();
  return t
    .toArray()
    .map((r) => [r.f0, r.f1, r.f2, r.f3] as PkMorRow)
    .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}

function sorted(model: Map<string, PkMorRow>): PkMorRow[] {
  return [...model.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}

const fixtures = fixturesDir('continuing Java primary-key tables');

describe.each(storageBackends('pk write java tables'))('continuing the Java pk-mor table on $name', (backend) => {
  let warehouse: BackendWarehouse;
  let table: Table;
  const enabled = backend.available && fixtures !== null;

  copyFixtureForSuite(
    backend,
    enabled,
    () => join(fixtures!, 'pk-mor', TABLE),
    'pk-mor',
    (copy) => ({ warehouse, table } = copy),
  );

  /** Snapshot ids of each write: its APPEND, then the COMPACT of the writer's compaction, if any. */
  const writes: number[][] = [];

  it.skipIf(!enabled)('takes upserts and deletes; every snapshot reads as the model says', async () => {
    const model = new Map(PK_MOR_LATEST.map((r) => [keyOf(r), r]));
    const expected = new Map<number, PkMorRow[]>([[5, sorted(model)]]);
    const put = (r: PkMorRow): void => void model.set(keyOf(r), r);
    // Each write's snapshots (a COMPACT one reads like the APPEND before it) hold the model.
    const expectNow = (result: CommitResult): void => {
      expect(result.status).toBe('committed');
      const ids = result.status === 'committed' ? result.snapshotIds : [];
      expect(ids[0]).toBe(5 + writes.flat().length + 1);
      writes.push([...ids]);
      for (const id of ids) expected.set(id, sorted(model));
    };

    // Snapshot 6: upserts in both partitions, a new bucket of partition 20, a key updated twice.
    const upserts: PkMorRow[] = [
      ['Alice', 10, 1, 99.5],
      ['Zed', 20, 0, 1.5],
      ['Marco', 10, 0, 50.0],
      ['Marco', 10, 0, 51.0],
      ['Nina', 10, 1, 7.25],
    ];
    const r6 = await table.append(upserts.map(([f0, f1, f2, f3]) => ({ f0, f1, f2, f3 })));
    upserts.forEach(put);
    expectNow(r6);

    // Next: row kinds from a field: -D of the long key, -U/+U of Skye.
    const r7 = await table.append(
      [
        { op: '-D', f0: TWO_ROADS, f1: 10, f2: 1, f3: 11.0 },
        { op: '-U', f0: 'Skye', f1: 10, f2: 0, f3: 21.0 },
        { op: '+U', f0: 'Skye', f1: 10, f2: 0, f3: 22.0 },
      ],
      { rowKindField: 'op' },
    );
    model.delete(keyOf([TWO_ROADS, 10, 1, 0]));
    put(['Skye', 10, 0, 22.0]);
    expectNow(r7);

    // Then a delete by key (one missing key) and a delete by predicate.
    const byKey = await table.delete([
      { f0: 'Bob', f1: 10, f2: 0 },
      { f0: 'Nobody', f1: 10, f2: 0 },
    ]);
    expect(byKey.deleted).toBe(1);
    model.delete(keyOf(['Bob', 10, 0, 0]));
    expectNow(byKey.result);
    const byWhere = await table.delete({ where: "f1 = 20 AND f0 <> 'Zed'" });
    expect(byWhere.deleted).toBe(2);
    model.delete(keyOf(['Lucy', 20, 1, 0]));
    model.delete(keyOf(['Paul', 20, 1, 0]));
    expectNow(byWhere.result);
    // The Java table's f1=10 buckets reach 5 sorted runs: the writers compacted them.
    expect(writes.some((ids) => ids.length === 2)).toBe(true);

    for (const [id, want] of expected) expect(await rows(table, id), `snapshot ${id}`).toEqual(want);
  });

  it.skipIf(!enabled)("writes manifest entries with the fields Java writes, continuing each bucket's sequence numbers", async () => {
    const java = (await deltaEntries(table, 5)).find((e) => e.kind === 'ADD')!;
    const ours = await deltaEntries(table, writes[0]![0]!);
    expect(ours.length).toBeGreaterThan(0);
    const keyTypes = [STR, INT];
    const valueTypes = [STR, INT, INT, DOUBLE];
    for (const e of ours) {
      expect(e.kind).toBe('ADD');
      expect(e.totalBuckets).toBe(2);
      expect(Object.keys(e.file).sort()).toEqual(Object.keys(java.file).sort());
      expect(e.file).toMatchObject({
        level: 0,
        fileSource: 0,
        schemaId: 0,
        extraFiles: [],
        embeddedIndex: null,
        valueStatsCols: null,
        externalPath: null,
      });
      expect(e.file.deleteRowCount).toBe(0);
      expect(e.file.keyStats.nullCounts).toEqual([0, 0]);
      expect(e.file.valueStats.nullCounts).toEqual([0, 0, 0, 0]);
    }
    const entry = (f0: string): ManifestEntry =>
      ours.find(
        (e) =>
          (deserializeBinaryRow(e.file.minKey, keyTypes) as unknown[])[0] === f0 ||
          (deserializeBinaryRow(e.file.maxKey, keyTypes) as unknown[])[0] === f0,
      )!;
    // f1=10 bucket 0 (f2 = 1): Java's live files end at sequence 2; Alice and Nina follow.
    const b0 = entry('Alice');
    expect(b0.bucket).toBe(0);
    expect(deserializeBinaryRow(b0.partition, [INT])).toEqual([10]);
    expect(deserializeBinaryRow(b0.file.minKey, keyTypes)).toEqual(['Alice', 1]);
    expect(deserializeBinaryRow(b0.file.maxKey, keyTypes)).toEqual(['Nina', 1]);
    expect(deserializeBinaryRow(b0.file.keyStats.minValues, keyTypes)).toEqual(['Alice', 1]);
    expect(deserializeBinaryRow(b0.file.valueStats.maxValues, valueTypes)).toEqual(['Nina', 10, 1, 99.5]);
    expect([b0.file.minSequenceNumber, b0.file.maxSequenceNumber]).toEqual([3n, 4n]);
    // f1=10 bucket 1 (f2 = 0): Java's files end at 11; the two Marco upserts merge to one row.
    const b1 = entry('Marco');
    expect(b1.bucket).toBe(1);
    expect(b1.file.rowCount).toBe(1);
    expect([b1.file.minSequenceNumber, b1.file.maxSequenceNumber]).toEqual([13n, 13n]);
    // f1=20 bucket 1 is new: it starts at 0.
    const z = entry('Zed');
    expect(z.bucket).toBe(1);
    expect(deserializeBinaryRow(z.partition, [INT])).toEqual([20]);
    expect(z.file.minSequenceNumber).toBe(0n);
    // The row-kind commit counts its -U/-D rows: the -D of the long key; Skye's -U/+U pair merged
    // in the write buffer into its +U, as Java's buffer does.
    const kinds = await deltaEntries(table, writes[1]![0]!);
    expect(kinds.reduce((n, e) => n + (e.file.deleteRowCount ?? 0), 0)).toBe(1);
    expect(kinds.reduce((n, e) => n + e.file.rowCount, 0)).toBe(2);
  });

  it.skipIf(!enabled)(
    'writes level-0 files into the deletion-vector table pk-dv, which batch reads show only after a compaction (as Java)',
    async () => {
      const location = `${warehouse.root}/pk-dv`;
      await copyTree(join(fixtures!, 'pk-dv', 'default.db/pk_table_scan_and_read_dv'), location, warehouse);
      const dv = await openTable(location, { fileIO: warehouse.io });
      const before = await rows(dv, 6);
      expect(before.map((r) => r[0])).toContain('Alex');
      const result = await dv.append([{ f0: 'Alex', f1: 10, f2: 0, f3: 99.0 }]);
      // The write's APPEND snapshot holds level 0 only; its COMPACT snapshot (the batch write
      // compacts before it completes) makes the row visible.
      expect(result).toMatchObject({ status: 'committed', snapshotIds: [7, 8] });
      expect(await rows(dv, 7)).toEqual(before);
      expect((await rows(dv, 8)).find((r) => r[0] === 'Alex')).toEqual(['Alex', 10, 0, 99.0]);
      const [added] = await deltaEntries(dv, 7);
      expect(added!.file.level).toBe(0);
      expect(added!.bucket).toBe(1);
      const live = (await dv.newRead({ snapshotId: 6 }).plan()).splits.filter(
        (s) => s.bucket === 1 && s.partition.join() === added!.partition.join(),
      );
      const max = live.flatMap((s) => s.files.map((f) => f.meta.maxSequenceNumber)).reduce((a, b) => (a > b ? a : b));
      expect(added!.file.minSequenceNumber).toBe(max + 1n);
    },
  );
});
