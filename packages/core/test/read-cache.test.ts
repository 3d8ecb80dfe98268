/**
 * The reads of a long-lived `Table` keep immutable metadata (manifest lists, manifests, index
 * manifests, deletion vectors, Parquet footers) and the newest snapshot and schema ids seen: a key
 * lookup after the first costs a snapshot probe, a schema probe and the data it reads, and still
 * sees what other writers committed (appends, deletes, a rollback, an added column). The cache
 * stays within its byte bound.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, SchemaChanges, alterTable, openTable, type Table } from '../src/index.js';
import { ReadCache, sharedReadCache } from '../src/read/read-cache.js';
import { countingRequests } from './helpers.js';

function category(path: string): string {
  if (path.includes('/index/')) return 'index';
  if (path.includes('/manifest/')) return 'manifest';
  if (path.includes('/snapshot/')) return 'snapshot';
  if (path.includes('/schema/')) return 'schema';
  if (path.includes('/bucket-')) return 'data';
  return 'other';
}

function counting(inner: FileIO): { io: FileIO; take(): Record<string, number> } {
  return countingRequests(inner, (request) => (request.path !== undefined ? category(request.path) : 'many'));
}

let n = 0;

async function setUp(options: Record<string, string> = {}): Promise<{ location: string; io: MemoryFileIO }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://read-cache-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'BIGINT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    options: { bucket: '4', ...options },
  });
  const location = catalog.tableLocation('db.t');
  const writer = await openTable(location, { fileIO: io });
  for (let w = 0; w < 3; w++) await writer.append(Array.from({ length: 50 }, (_, i) => ({ id: BigInt(w * 50 + i), v: `v${w}-${i}` })));
  return { location, io };
}

async function lookup(table: Table, id: number): Promise<unknown[]> {
  return (await table.newRead({ where: `id = ${id}` }).toArrowTable()).toArray().map((r) => r.toJSON().v);
}

describe('read cache of a long-lived table', () => {
  for (const dv of [false, true]) {
    it(`after the first lookups, a lookup reads no manifest${dv ? ', index manifest or deletion vector' : ''} and only the data of its bucket${dv ? ' (deletion vectors)' : ''}`, async () => {
      const { location, io } = await setUp(dv ? { 'deletion-vectors.enabled': 'true' } : {});
      if (dv) await (await openTable(location, { fileIO: io })).delete([{ id: 7n }, { id: 120n }]);
      const counter = counting(io);
      const table = await openTable(location, { fileIO: counter.io });
      counter.take();
      expect(await lookup(table, 3)).toEqual(['v0-3']);
      const first = counter.take();
      expect(first.manifest).toBeGreaterThan(0);
      const ids = [60, 149, 7, 101, 120, 33];
      // The first lookup of each bucket reads that bucket's vectors; later ones have them.
      for (const id of ids) await lookup(table, id);
      counter.take();
      for (const id of ids) {
        const expected = dv && (id === 7 || id === 120) ? [] : [`v${Math.floor(id / 50)}-${id % 50}`];
        expect(await lookup(table, id), `id ${id}`).toEqual(expected);
        const c = counter.take();
        expect(c.manifest ?? 0, `id ${id}: ${JSON.stringify(c)}`).toBe(0);
        expect(c.index ?? 0, `id ${id}: ${JSON.stringify(c)}`).toBe(0);
        // The newest snapshot is read and the next id probed; the next schema id is probed.
        expect(c.snapshot, `id ${id}: ${JSON.stringify(c)}`).toBe(2);
        expect(c.schema, `id ${id}: ${JSON.stringify(c)}`).toBe(1);
        // The decoded row groups of the bucket were kept by the lookups before.
        expect(c.data ?? 0, `id ${id}: ${JSON.stringify(c)}`).toBe(0);
      }
    });
  }

  it("keeps decoded rows for key lookups only, within 'lookup.cache-max-memory-size'", async () => {
    const { location, io } = await setUp();
    const table = await openTable(location, { fileIO: io });
    expect((await table.newRead({ where: "v = 'v1-3'" }).toArrowTable()).numRows).toBe(1);
    expect((await table.newRead({ where: 'id > 140' }).toArrowTable()).numRows).toBe(9);
    expect(sharedReadCache(table.context).size.decoded).toBe(0);
    await lookup(table, 3);
    expect(sharedReadCache(table.context).size.decoded).toBeGreaterThan(0);
    const small = await setUp({ 'lookup.cache-max-memory-size': '1 b' });
    const bounded = await openTable(small.location, { fileIO: small.io });
    for (const id of [3, 60, 149]) await lookup(bounded, id);
    expect(sharedReadCache(bounded.context).size.decoded).toBeLessThanOrEqual(1);
  });

  it('sees appends, deletes, an added column and a rollback made through another Table', async () => {
    const { location, io } = await setUp();
    const reader = await openTable(location, { fileIO: io });
    const writer = await openTable(location, { fileIO: io });
    expect(await lookup(reader, 10)).toEqual(['v0-10']);
    await writer.append([
      { id: 10n, v: 'new' },
      { id: 500n, v: 'five hundred' },
    ]);
    expect(await lookup(reader, 10)).toEqual(['new']);
    expect(await lookup(reader, 500)).toEqual(['five hundred']);
    await writer.delete([{ id: 500n }]);
    expect(await lookup(reader, 500)).toEqual([]);
    const beforeAlter = (await writer.snapshotManager.latestId())!;
    await alterTable(io, writer.paths, [SchemaChanges.addColumn('w', 'INT')]);
    const after = await openTable(location, { fileIO: io });
    await after.append([{ id: 11n, v: 'with w', w: 5 }]);
    const row = (await reader.newRead({ where: 'id = 11' }).toArrowTable()).toArray().map((r) => r.toJSON());
    expect(row).toEqual([{ id: 11n, v: 'with w', w: 5 }]);
    // Back to before the ALTER's write, then a new commit under the id the reader saw last.
    await after.rollbackTo(beforeAlter);
    await after.append([{ id: 10n, v: 'after rollback' }]);
    expect(await lookup(reader, 10)).toEqual(['after rollback']);
    expect(await lookup(reader, 11)).toEqual(['v0-11']);
  });

  it('holds at most its byte bound, least recently used out first', async () => {
    const cache = new ReadCache(10_000);
    for (let i = 0; i < 50; i++) await cache.manifest(`m${i}`, () => Promise.resolve(new Uint8Array(1_000)));
    expect(cache.size.metadata).toBeLessThanOrEqual(10_000);
    let reads = 0;
    const load = (): Promise<Uint8Array> => {
      reads++;
      return Promise.resolve(new Uint8Array(1_000));
    };
    await cache.manifest('m49', load);
    expect(reads).toBe(0);
    await cache.manifest('m0', load);
    expect(reads).toBe(1);
    // A failed read is not kept.
    await expect(cache.manifest('bad', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await cache.manifest('bad', load);
    expect(reads).toBe(2);
  });
});
