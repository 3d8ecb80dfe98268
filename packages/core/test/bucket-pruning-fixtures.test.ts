/**
 * Bucket pruning on tables Java Paimon wrote (../shared/fixtures/paimon): `pk-mor` and `pk-dv` are
 * fixed-bucket tables (bucket = 2, bucket-key f2 INT, partition f1). Java chose the bucket of every
 * row; the selector built from a filter fixing f2 must accept exactly the bucket Java put each
 * value in, and a pruned read must plan only that bucket and return the rows of an unpruned read
 * that the filter keeps, at every snapshot.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { evaluate, openTable, parsePredicate, type Table } from '../src/index.js';
import { bucketSelector } from '../src/scan/bucket-filter.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const fixtures = resolve(repoRoot, '../shared/fixtures/paimon');
const present = existsSync(fixtures);
if (!present) console.warn(`[skip] Paimon fixtures not found at ${fixtures}; bucket pruning fixture tests are skipped`);

const TABLES = {
  'pk-mor': { path: join(fixtures, 'pk-mor/default.db/pk_table_scan_and_read_mor'), snapshots: [1, 2, 3, 4, 5] },
  'pk-dv': { path: join(fixtures, 'pk-dv/default.db/pk_table_scan_and_read_dv'), snapshots: [1, 2, 3, 4, 5, 6] },
};

type Row = Record<string, unknown>;

function rowsOf(t: arrow.Table): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < t.numRows; i++) {
    out.push(Object.fromEntries(t.schema.fields.map((f, c) => [f.name, t.getChildAt(c)!.get(i) ?? null])));
  }
  return out;
}

const sorted = (rows: Row[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

/** Every row of the snapshot with the bucket Java wrote it to (one read per bucket, no filter). */
async function rowsByBucket(table: Table, snapshotId: number): Promise<Array<{ row: Row; bucket: number }>> {
  const out: Array<{ row: Row; bucket: number }> = [];
  for (const bucket of [0, 1]) {
    const t = await table.newRead({ snapshotId, bucket }).toArrowTable();
    for (const row of rowsOf(t)) out.push({ row, bucket });
  }
  return out;
}

describe.skipIf(!present)('bucket pruning on Java-written fixed-bucket tables', () => {
  for (const [name, { path, snapshots }] of Object.entries(TABLES)) {
    it(`${name}: the selector of f2 = v accepts exactly the bucket Java wrote v to`, async () => {
      const table = await openTable(path);
      const schema = table.schema();
      let checked = 0;
      for (const snapshotId of snapshots) {
        for (const { row, bucket } of await rowsByBucket(table, snapshotId)) {
          const selector = bucketSelector(schema, parsePredicate(`f2 = ${String(row['f2'])}`, schema.fields));
          expect(selector, `${name} snapshot ${snapshotId} f2 = ${String(row['f2'])}`).not.toBeNull();
          expect(selector!(bucket, 2), `${name} ${JSON.stringify(row)} in bucket ${bucket}`).toBe(true);
          expect(selector!(1 - bucket, 2), `${name} ${JSON.stringify(row)} not in bucket ${1 - bucket}`).toBe(false);
          checked++;
        }
      }
      // Both key values occur, in both buckets (README: f2 = 0 → bucket 1, f2 = 1 → bucket 0).
      expect(checked).toBeGreaterThan(10);
    });

    it(`${name}: a pruned read plans one bucket and returns the rows the filter keeps, at every snapshot`, async () => {
      const table = await openTable(path);
      const schema = table.schema();
      for (const snapshotId of snapshots) {
        const all = rowsOf(await table.newRead({ snapshotId }).toArrowTable());
        for (const where of ['f2 = 0', 'f2 = 1', "f2 = 1 AND f0 = 'Alice'", 'f2 IN (0, 7)', 'f2 = 5']) {
          const predicate = parsePredicate(where, schema.fields);
          const read = table.newRead({ snapshotId, where });
          const buckets = new Set((await read.plan()).files().map((f) => f.bucket));
          expect(buckets.size, `${name} snapshot ${snapshotId} ${where}`).toBeLessThanOrEqual(1);
          const model = all.filter((r) => evaluate(predicate, r) === true);
          expect(sorted(rowsOf(await read.toArrowTable())), `${name} snapshot ${snapshotId} ${where}`).toEqual(sorted(model));
        }
        // f2 = 0 lives in bucket 1 only.
        const zero = (await table.newRead({ snapshotId, where: 'f2 = 0' }).plan()).files();
        expect(zero.every((f) => f.bucket === 1)).toBe(true);
      }
    });

    it(`${name}: a filter on other key columns only (bucket-key is f2) prunes no bucket`, async () => {
      const table = await openTable(path);
      const schema = table.schema();
      for (const where of ["f0 = 'Alice'", "f0 = 'Alice' AND f1 = 10", 'f2 > 0', "f2 = 0 OR f0 = 'Bob'"]) {
        expect(bucketSelector(schema, parsePredicate(where, schema.fields)), where).toBeNull();
      }
      const all = rowsOf(await table.newRead().toArrowTable());
      const alice = rowsOf(await table.newRead({ where: "f0 = 'Alice'" }).toArrowTable());
      expect(alice.length).toBe(all.filter((r) => r['f0'] === 'Alice').length);
    });
  }
});
