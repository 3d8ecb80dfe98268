/**
 * A table created with `data-file.path-directory` keeps every data file under that directory, on
 * local disk and on the real S3 server, through every writer and maintenance job: appends, the
 * sink's writer/committer, compaction, snapshot expiration and orphan cleanup. Each step reads the
 * table back, so a file written to one place and looked up in another fails the test.
 */
import { describe, expect, it } from 'vitest';
import { type Table } from '@tidemark/core';
import { compactAppendTable, expireSnapshots, removeOrphanFiles } from '@tidemark/maintenance';
import { SinkCommitter, SinkWriter, tableFingerprint } from '@tidemark/sink';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { columns } from './support/table-definitions.mjs';

type Row = { id: number; dt: string; v: string };

function rowsOf(from: number, to: number, dt: string): Row[] {
  return Array.from({ length: to - from }, (_, i) => ({ id: from + i, dt, v: `v${from + i}` }));
}

async function readRows(table: Table): Promise<Row[]> {
  const t = await table.newRead().toArrowTable();
  return t
    .toArray()
    .map((r: { id: number; dt: string; v: string }) => ({ id: r.id, dt: r.dt, v: r.v }))
    .sort((a: Row, b: Row) => a.id - b.id);
}

describe.each(storageBackends('data-file path directory'))('data-file.path-directory on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);

    /** Paths (relative to the table root) of every object under `location` whose name says it is a data file. */
    async function dataFiles(location: string): Promise<string[]> {
      const out: string[] = [];
      for await (const st of env.wh.io.list(location)) {
        const rel = st.path.slice(location.length + 1);
        if (/(^|\/)bucket-[^/]+\/[^/]+\.parquet$/.test(rel)) out.push(rel);
      }
      return out.sort();
    }

    it('round-trips appends, sink commits, compaction, expiration and orphan cleanup', async () => {
      await env.catalog.createTable('db.t', {
        fields: columns('id INT NOT NULL', 'dt STRING', 'v STRING'),
        partitionKeys: ['dt'],
        options: { 'data-file.path-directory': 'data', 'snapshot.num-retained.min': '2', 'snapshot.time-retained': '1 ms' },
      });
      const table = await env.catalog.getTable('db.t');
      const location = table.location;

      // Appends: files land under data/, and the next read finds them.
      for (let i = 0; i < 5; i++)
        await table.append([...rowsOf(i * 10, i * 10 + 10, 'a'), ...rowsOf(100 + i, 101 + i, 'b')], { expire: false });
      const expected = [...Array.from({ length: 50 }, (_, i) => rowsOf(i, i + 1, 'a')[0]!), ...rowsOf(100, 105, 'b')].sort(
        (x, y) => x.id - y.id,
      );
      expect(await readRows(table)).toEqual(expected);
      const afterAppend = await dataFiles(location);
      expect(afterAppend.length).toBe(10);
      for (const f of afterAppend) expect(f).toMatch(/^data\/dt=(a|b)\/bucket-0\/data-[^/]+\.parquet$/);

      // The sink's writer and committer (which checks that every file exists before committing).
      const schema = table.schema();
      const committer = new SinkCommitter({
        fileIO: env.wh.io,
        tableLocation: location,
        schema,
        table: { location, fingerprint: await tableFingerprint(env.wh.io, location) },
        commitUser: 'sink-user',
        autoExpire: false,
      });
      const writer = new SinkWriter(env.wh.io, location, schema, 0);
      await writer.write(rowsOf(200, 210, 'c'));
      committer.add(await writer.prepareCommit(1n));
      const [commit] = await committer.commitNow(1n, { id: 'src', offset: 10, done: true });
      expect(commit!.result.status).toBe('committed');
      await writer.close();
      const reopened = await env.catalog.getTable('db.t');
      expect(await readRows(reopened)).toEqual([...expected, ...rowsOf(200, 210, 'c')]);
      expect((await dataFiles(location)).filter((f) => f.includes('dt=c'))).toEqual([
        expect.stringMatching(/^data\/dt=c\/bucket-0\/data-[^/]+\.parquet$/),
      ]);

      // Compaction rewrites partition a's five small files into one, under data/.
      const summary = await compactAppendTable(reopened, { partition: { dt: 'a' }, full: true });
      expect(summary.filesBefore).toBe(5);
      expect(summary.filesAfter).toBe(1);
      const compacted = await env.catalog.getTable('db.t');
      expect(await readRows(compacted)).toEqual([...expected, ...rowsOf(200, 210, 'c')]);

      // Expiration drops the files only old snapshots used; orphan cleanup keeps every live file.
      await expireSnapshots(compacted, { retainMin: 1, olderThanMs: Date.now() + 1 });
      await removeOrphanFiles(compacted, { olderThanMs: Date.now() });
      const live = await dataFiles(location);
      expect(live.filter((f) => f.includes('dt=a'))).toHaveLength(1);
      for (const f of live) expect(f.startsWith('data/')).toBe(true);
      expect(await readRows(await env.catalog.getTable('db.t'))).toEqual([...expected, ...rowsOf(200, 210, 'c')]);
    });
  });
});
