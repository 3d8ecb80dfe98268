/**
 * Primary-key tables in dynamic bucket mode (`bucket` = -1, the default), through the public
 * table API on local disk and on the real S3 server: upserts and deletes read back as the model
 * says, `dynamic-bucket.target-row-num` forces several buckets, a key updated across many commits
 * stays in its bucket, the HASH index files hold exactly the keys of their buckets, and data files
 * record `_TOTAL_BUCKETS` = -1 as Java's dynamic-bucket writer does.
 */
import { describe, expect, it } from 'vitest';
import {
  INDEX_TYPE_HASH,
  decodeHashIndex,
  keyHash,
  parseTypeString,
  readIndexManifest,
  readManifestEntries,
  readManifestList,
  serializeSchema,
} from '@tidemark/format';
import { buildInitialSchema, readDataFile, type Table } from '@tidemark/core';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { columns } from './support/table-definitions.mjs';

type Row = {
  k: number;
  dt: string;
  v: string;
};

async function readRows(table: Table, snapshotId?: number): Promise<Row[]> {
  const t = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  return t
    .toArray()
    .map((r: Row) => ({ k: r.k, dt: r.dt, v: r.v }))
    .sort((a: Row, b: Row) => (a.dt === b.dt ? a.k - b.k : a.dt < b.dt ? -1 : 1));
}

const KEY = [parseTypeString('INT NOT NULL')];

/**
 * Per partition: key -> bucket from the data files of the latest snapshot (every record, all
 * levels), failing when a key shows up in two buckets, and bucket -> indexed hashes.
 */
async function layout(table: Table): Promise<{ keys: Map<string, Map<number, number>>; index: Map<string, Map<number, number[]>> }> {
  const keys = new Map<string, Map<number, number>>();
  for (const split of (await table.newRead().plan()).splits) {
    expect(split.totalBuckets).toBe(-1);
    const dt = split.partitionSpec.dt!;
    const m = keys.get(dt) ?? new Map<number, number>();
    keys.set(dt, m);
    for (const f of split.files) {
      for await (const b of readDataFile(table.fileIO, { path: f.path, schema: table.schema() }, table.schema().fields, {
        keyValue: true,
      })) {
        const col = b.batch.getChild('k')!;
        for (let i = 0; i < b.batch.numRows; i++) {
          const k = col.get(i) as number;
          const prev = m.get(k);
          if (prev !== undefined) expect(prev, `key ${k} of ${dt} in buckets ${prev} and ${split.bucket}`).toBe(split.bucket);
          m.set(k, split.bucket);
        }
      }
    }
  }
  const index = new Map<string, Map<number, number[]>>();
  const latest = (await table.snapshotManager.latest())!;
  for (const e of await readIndexManifest(table.fileIO, table.context.paths.manifestPath(latest.indexManifest!))) {
    expect(e.indexType).toBe(INDEX_TYPE_HASH);
    const dt = String(table.context.paths.partitionValues(e.partition)[0]);
    const m = index.get(dt) ?? new Map<number, number[]>();
    index.set(dt, m);
    expect(m.has(e.bucket)).toBe(false);
    const path = table.context.paths.indexFilePath(e.fileName, e.externalPath);
    m.set(e.bucket, [...decodeHashIndex(await table.fileIO.read(path), path, e.rowCount)]);
  }
  return { keys, index };
}

/** Every data key's hash is indexed in exactly its bucket, and every indexed hash is a written key's. */
function expectIndexMatchesData(l: Awaited<ReturnType<typeof layout>>, written: Map<string, Set<number>>): void {
  for (const [dt, ks] of written) {
    const hashToBucket = new Map<number, number>();
    for (const [bucket, hashes] of l.index.get(dt) ?? []) for (const h of hashes) hashToBucket.set(h, bucket);
    expect(hashToBucket.size).toBe(ks.size);
    for (const k of ks) {
      const b = l.keys.get(dt)?.get(k);
      expect(b, `key ${k} of ${dt} has data`).toBeDefined();
      expect(hashToBucket.get(keyHash(KEY, [k])), `key ${k} of ${dt}`).toBe(b);
    }
  }
}

describe.each(storageBackends('dynamic bucket round trip'))('dynamic buckets on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    let n = 0;

    async function create(options: Record<string, string> = {}): Promise<Table> {
      const name = `db.t${++n}`;
      await env.catalog.createTable(name, {
        fields: columns('k INT NOT NULL', 'dt STRING NOT NULL', 'v STRING'),
        primaryKeys: ['k', 'dt'],
        partitionKeys: ['dt'],
        // No 'bucket' option: -1, dynamic, is the default of primary-key tables.
        options,
      });
      return env.catalog.getTable(name);
    }

    it('upserts and deletes round-trip; target-row-num opens buckets; a key keeps its bucket across many commits', async () => {
      const table = await create({ 'dynamic-bucket.target-row-num': '4' });
      const model = new Map<string, Row>();
      const written = new Map<string, Set<number>>([
        ['a', new Set()],
        ['b', new Set()],
      ]);
      const apply = (rows: Row[]): void => {
        for (const r of rows) {
          model.set(`${r.dt}/${r.k}`, r);
          written.get(r.dt)!.add(r.k);
        }
      };
      const first = Array.from({ length: 10 }, (_, k): Row => ({ k, dt: 'a', v: `a${k}-0` }));
      first.push({ k: 1, dt: 'b', v: 'b1-0' });
      await table.append(first, { expire: false });
      apply(first);
      let l = await layout(table);
      // 10 new keys, 4 per bucket: buckets 0, 1, 2 in partition a, filled in order.
      expect([...l.index.get('a')!.keys()].sort()).toEqual([0, 1, 2]);
      expect([...l.index.get('a')!.values()].map((h) => h.length).sort()).toEqual([2, 4, 4]);
      expectIndexMatchesData(l, written);
      const bucketOfKey = new Map(l.keys.get('a'));

      // Many commits updating old keys and adding new ones (seeded, so reproducible).
      let seed = 7;
      const rand = (m: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % m);
      for (let c = 1; c <= 8; c++) {
        const rows: Row[] = [];
        const ks = new Set<number>();
        while (ks.size < 6) ks.add(rand(14));
        for (const k of ks) rows.push({ k, dt: 'a', v: `a${k}-${c}` });
        rows.push({ k: c, dt: 'b', v: `b${c}-${c}` });
        await table.append(rows, { expire: false });
        apply(rows);
      }
      const dels = [
        { k: 3, dt: 'a' },
        { k: 2, dt: 'b' },
      ];
      const d = await table.delete(dels, { expire: false });
      expect(d.deleted).toBe(2);
      for (const x of dels) model.delete(`${x.dt}/${x.k}`);

      expect(await readRows(table)).toEqual([...model.values()].sort((a, b) => (a.dt === b.dt ? a.k - b.k : a.dt < b.dt ? -1 : 1)));
      l = await layout(table);
      expectIndexMatchesData(l, written);
      for (const [k, b] of bucketOfKey) expect(l.keys.get('a')!.get(k), `key ${k} moved`).toBe(b);
      // 14 keys in partition a need 4 buckets of 4.
      expect(l.index.get('a')!.size).toBe(4);

      // Data files of a dynamic-bucket table record _TOTAL_BUCKETS = -1.
      const latest = (await table.snapshotManager.latest())!;
      for (const list of [latest.baseManifestList, latest.deltaManifestList]) {
        for (const m of await readManifestList(table.fileIO, table.context.paths.manifestPath(list))) {
          for await (const e of readManifestEntries(table.fileIO, table.context.paths.manifestPath(m.fileName)))
            expect(e.totalBuckets).toBe(-1);
        }
      }
    });

    it('initial-buckets spreads new keys over several buckets from the start; overwrite starts the partition over', async () => {
      const table = await create({ 'dynamic-bucket.initial-buckets': '3' });
      const rows = Array.from({ length: 30 }, (_, k): Row => ({ k, dt: 'a', v: `v${k}` }));
      await table.append(rows, { expire: false });
      let l = await layout(table);
      expect([...l.index.get('a')!.keys()].sort()).toEqual([0, 1, 2]);
      for (const [k, b] of l.keys.get('a')!) expect(b).toBe(Math.abs(keyHash(KEY, [k]) % 3));

      await table.overwrite([{ k: 100, dt: 'a', v: 'x' }], { expire: false });
      expect(await readRows(table)).toEqual([{ k: 100, dt: 'a', v: 'x' }]);
      l = await layout(table);
      expectIndexMatchesData(l, new Map([['a', new Set([100])]]));
    });

    it('refuses postpone buckets and cross-partition primary keys before writing', async () => {
      const postpone = await create({ bucket: '-2' });
      await expect(postpone.append([{ k: 1, dt: 'a', v: 'x' }])).rejects.toThrow(/-2/);
      const name = `db.t${++n}`;
      const spec = {
        fields: columns('k INT NOT NULL', 'dt STRING NOT NULL'),
        primaryKeys: ['k'],
        partitionKeys: ['dt'],
      };
      await expect(env.catalog.createTable(name, spec)).rejects.toThrow(/partition key\(s\) dt/);
      expect(await env.catalog.tableExists(name)).toBe(false);
      // Java writes such a table (cross-partition upserts); tidemark refuses to write it.
      const location = env.catalog.tableLocation(name);
      const javaSchema = { ...buildInitialSchema({ ...spec, primaryKeys: ['k', 'dt'] }), primaryKeys: ['k'] };
      await env.catalog.fileIO.write(`${location}/schema/schema-0`, serializeSchema(javaSchema));
      const cross = await env.catalog.getTable(name);
      await expect(cross.append([{ k: 1, dt: 'a' }])).rejects.toThrow(/partition key\(s\) dt/);
      expect(await cross.snapshotManager.latestId()).toBeNull();
    });
  });
});
