/**
 * What a delete on an append table with deletion vectors, and a read of it, cost in storage
 * requests: a bucket's vectors share one DV index file, which is read once per delete or read
 * (not once per data file), and a delete's sequential round trips do not grow with a round trip
 * per data file. Counted on the in-memory store with a small per-request latency so that requests
 * issued together overlap as on an object store (counts, never times).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, type Table } from '../src/index.js';
import { countingRequests } from './helpers.js';

/** What a request touched: DV index files, data files, manifests or other metadata. */
function category(path: string): string {
  if (path.includes('/index/')) return 'index';
  if (path.includes('/manifest/')) return 'manifest';
  if (path.includes('/bucket-')) return 'data';
  return 'meta';
}

interface Counter {
  readonly io: FileIO;
  /** Requests by `kind category` (e.g. `get index`), and `roundTrips`: requests issued while none was in flight. */
  take(): Record<string, number>;
}

function counting(inner: FileIO, latencyMs = 1): Counter {
  return countingRequests(
    inner,
    (request) =>
      `${request.kind === 'conditional-put' ? 'put' : request.kind} ${request.path !== undefined ? category(request.path) : 'many'}`,
    latencyMs,
  );
}

let n = 0;

/**
 * A one-bucket append table with deletion vectors and `files` data files of 10 rows each
 * (`v` = id % 10), whose rows with v = 0 are already deleted: every file has a vector, all in the
 * bucket's one DV index file.
 */
async function tableWithVectors(files: number): Promise<{ table: Table; counter: Counter }> {
  const counter = counting(new MemoryFileIO());
  const catalog = new FileSystemCatalog(`memory://dv-requests-${process.pid}-${++n}/wh`, { fileIO: counter.io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'v', type: 'INT' },
    ],
    options: { bucket: '1', 'bucket-key': 'id', 'deletion-vectors.enabled': 'true' },
  });
  const table = await catalog.getTable('db.t');
  for (let f = 0; f < files; f++) {
    const result = await table.append(Array.from({ length: 10 }, (_, i) => ({ id: f * 10 + i, v: i })));
    expect(result.status).toBe('committed');
  }
  expect((await table.delete({ where: 'v = 0' })).deleted).toBe(files);
  counter.take();
  return { table, counter };
}

/** Requests of a delete of the rows with v = 1 (one in every file), and of a read after it. */
async function costs(files: number): Promise<{ del: Record<string, number>; read: Record<string, number>; rows: number }> {
  const { table, counter } = await tableWithVectors(files);
  expect((await table.delete({ where: 'v = 1' })).deleted).toBe(files);
  const del = counter.take();
  const rows = (await table.newRead().toArrowTable()).numRows;
  const read = counter.take();
  return { del, read, rows };
}

describe('requests of deletes and reads on an append table with deletion vectors', () => {
  it('reads the bucket DV index file a fixed number of times however many data files have vectors', async () => {
    const small = await costs(4);
    const large = await costs(16);
    expect(small.rows).toBe(4 * 8);
    expect(large.rows).toBe(16 * 8);
    // The delete reads the vectors of the files it scans with one ranged read, and the whole file
    // once to rewrite it; it writes one new DV index file.
    expect(large.del['get index']).toBe(small.del['get index']);
    expect(large.del['get index']).toBeLessThanOrEqual(2);
    expect(large.del['put index']).toBe(1);
    // A read fetches the split's vectors at once.
    expect(large.read['get index']).toBe(1);
    expect(small.read['get index']).toBe(1);
  });

  it("a delete's sequential round trips grow by well under one per data file", async () => {
    const small = await costs(4);
    const large = await costs(16);
    // Scanning a file is at least one read, but files are scanned a few at a time and their
    // vectors are not fetched one by one: 12 more files cost well under 12 more round trips
    // (about 4 each when every file's vector and data were read in turn, and every manifest of
    // the commit's checks one after another).
    expect(large.del['get data']! - small.del['get data']!).toBeGreaterThanOrEqual(12);
    expect(large.del.roundTrips! - small.del.roundTrips!).toBeLessThanOrEqual(8);
    // Reads overlap the same way (a round trip per file's vector before).
    expect(large.read.roundTrips! - small.read.roundTrips!).toBeLessThanOrEqual(6);
  });

  it("a delete's commit reads each manifest at most once besides the scan that plans it", async () => {
    const { table, counter } = await tableWithVectors(12);
    const latest = (await table.snapshotManager.latest())!;
    const { readManifestList } = await import('@tidemark/format');
    const lists = await Promise.all(
      [latest.baseManifestList, latest.deltaManifestList].map((l) => readManifestList(table.fileIO, table.paths.manifestPath(l))),
    );
    const manifests = lists.flat().length;
    counter.take();
    expect((await table.delete({ where: 'v = 1' })).deleted).toBe(12);
    const del = counter.take();
    // Twice each manifest and its two lists (the scan, then the commit's checks through its cache),
    // plus four index-manifest reads; the commit's DV check used to read every manifest again.
    expect(del['get manifest']).toBeLessThanOrEqual(2 * (manifests + 2) + 4);
  });
});
