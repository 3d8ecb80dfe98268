/**
 * The base check of a reused Table remembers what it stat'ed, and what it learned stays sound when
 * another writer (here another Table object: another process, in effect) adds files to a bucket it
 * checked before while its own commits touch other buckets: the next commit that touches that
 * bucket still stats those files, and refuses a missing or truncated one, naming it. A file that a
 * later snapshot deleted is not looked for (cleanup may have removed it).
 * Local disk and the real S3 server.
 */
import { describe, expect, it } from 'vitest';
import { CorruptTableError, type Table } from '@tidemark/core';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';

// With 2 buckets keyed on `id` (INT), ids 1, 2, 4, 5, 6, 8 go to bucket 0 and 3, 7 to bucket 1.
const A = [1, 2, 4, 5, 6, 8];
const B = [3, 7];

describe.each(storageBackends('base check memory'))('the base check of a reused Table on $name', { timeout: 120_000 }, (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    let n = 0;

    /** Two Table objects on one new table: `a`, reused for every append, and `b`, the other writer. */
    async function twoWriters(): Promise<{ a: Table; b: Table }> {
      const name = `db.t${++n}`;
      await env.catalog.createTable(name, {
        fields: [
          { name: 'id', type: 'INT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        options: { bucket: '2', 'bucket-key': 'id' },
      });
      return { a: await env.catalog.getTable(name), b: await env.catalog.getTable(name) };
    }

    /** Paths of the live data files of `bucket`. */
    async function bucketFiles(t: Table, bucket: number): Promise<string[]> {
      const plan = await t.newRead().plan();
      return plan
        .files()
        .filter((f) => f.bucket === bucket)
        .map((f) => f.path);
    }

    /**
     * `a` checks bucket 0 (its second append there), `b` adds a file to bucket 0, `a` appends to
     * bucket 1 only (reading the manifest `b` wrote). Returns the file `b` added.
     */
    async function fileAddedBehindTheCheck(a: Table, b: Table): Promise<string> {
      await a.append([{ id: A[0]!, v: 'a1' }]);
      await a.append([{ id: A[1]!, v: 'a2' }]);
      const before = await bucketFiles(a, 0);
      await b.append([{ id: A[2]!, v: 'b1' }]);
      const added = (await bucketFiles(a, 0)).filter((p) => !before.includes(p));
      expect(added).toHaveLength(1);
      expect(await bucketFiles(a, 1)).toEqual([]);
      expect((await a.append([{ id: B[0]!, v: 'a3' }])).status).toBe('committed');
      expect(await bucketFiles(a, 1)).toHaveLength(1); // B[0] did land in the other bucket
      return added[0]!;
    }

    async function refused(t: Table, id: number): Promise<CorruptTableError> {
      const latest = (await t.snapshotManager.latest())!.id;
      const error = await t.append([{ id, v: 'late' }]).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CorruptTableError);
      expect((await t.snapshotManager.latest())!.id).toBe(latest); // nothing committed
      return error as CorruptTableError;
    }

    it('refuses to commit next to a file another writer added to a checked bucket and that went missing', async () => {
      const { a, b } = await twoWriters();
      const file = await fileAddedBehindTheCheck(a, b);
      await env.wh.io.delete(file);
      const first = await refused(a, A[3]!);
      expect(first.message).toContain(`live data file ${file} cannot be found`);
      // And again: a refusal does not count as a pass.
      expect((await refused(a, A[4]!)).message).toContain(`live data file ${file} cannot be found`);
    });

    it('refuses to commit next to a file another writer added to a checked bucket and that was truncated', async () => {
      const { a, b } = await twoWriters();
      const file = await fileAddedBehindTheCheck(a, b);
      const bytes = await env.wh.io.read(file);
      await env.wh.io.write(file, bytes.subarray(0, 10));
      const error = await refused(a, A[3]!);
      expect(error.message).toContain(`live data file ${file} is damaged`);
      expect(error.message).toContain(`it is 10 bytes, but its manifest entry records ${bytes.length}`);
    });

    it('does not look for a file a later snapshot deleted, once cleanup removed it', async () => {
      const { a, b } = await twoWriters();
      const file = await fileAddedBehindTheCheck(a, b);
      // `b` replaces the whole table (its file included), `a` commits to bucket 1 on top of that,
      // and the replaced file goes, as expiration and orphan cleanup remove it in time.
      await b.overwrite([{ id: B[1]!, v: 'b2' }]);
      expect((await a.append([{ id: B[0]!, v: 'a4' }])).status).toBe('committed');
      await env.wh.io.delete(file);
      expect((await a.append([{ id: A[3]!, v: 'a5' }])).status).toBe('committed');
      const rows = await a.newRead().toArrowTable();
      expect(
        rows
          .getChild('id')!
          .toArray()
          .sort((x: number, y: number) => x - y),
      ).toEqual(Int32Array.from([A[3]!, B[0]!, B[1]!]).sort());
    });
  });
});
