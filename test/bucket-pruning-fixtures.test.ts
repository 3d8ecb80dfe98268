/**
 * Bucket pruning against tables Java Paimon wrote (`bucket-key` = f2, 2 buckets): a filter on the
 * key finds every row in the bucket Java's writer put it in, with merge-on-read and with deletion
 * vectors, and plans no other bucket.
 */
import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { fixturesDir } from './support/fixtures.js';

const dir = fixturesDir('bucket-pruning fixture tests');

const TABLES = [
  { fixture: 'pk-mor', table: 'pk_table_scan_and_read_mor' },
  { fixture: 'pk-dv', table: 'pk_table_scan_and_read_dv' },
];

describe.skipIf(dir === null)('bucket pruning on Java-written tables', () => {
  for (const t of TABLES) {
    it(`${t.fixture}: each row is found by its key, in the one bucket Java wrote it to`, async () => {
      const table = await openTable(`${dir}/${t.fixture}/default.db/${t.table}`);
      const all = (await table.newRead().toArrowTable())
        .toArray()
        .map((r) => r.toJSON() as { f0: string; f1: number; f2: number; f3: number });
      expect(all.length).toBeGreaterThan(5);
      for (const row of all) {
        const key = `f0 = '${row.f0.replace(/'/g, "''")}' AND f1 = ${row.f1} AND f2 = ${row.f2}`;
        const read = table.newRead({ where: key });
        const plan = await read.plan();
        // The README's bucket hash check: f2 = 0 is in bucket 1, f2 = 1 in bucket 0.
        expect(new Set(plan.splits.map((s) => s.bucket)), key).toEqual(new Set([row.f2 === 0 ? 1 : 0]));
        const got = (await read.toArrowTable()).toArray().map((r) => r.toJSON());
        expect(got, key).toEqual([row]);
      }
      for (const f2 of [0, 1]) {
        const got = await table.newRead({ where: `f2 = ${f2}` }).toArrowTable();
        expect(got.numRows).toBe(all.filter((r) => r.f2 === f2).length);
      }
    });
  }
});
