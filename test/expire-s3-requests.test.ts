/**
 * Requests snapshot expiration sends to the real S3 server, counted by a recording proxy in front
 * of it: files go in DeleteObjects batches, snapshot files too (one request per batch, plus the
 * batch's newest file alone and one EARLIEST write before the batch), and no file is probed
 * before it is deleted. Counts, not times.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3FileIO } from '@tidemark/storage';
import { SnapshotManager, TablePaths } from '@tidemark/core';
import { expireSnapshots } from '@tidemark/maintenance';
import { s3Available, s3TestOptions } from './support/s3.js';
import { onS3Table } from './support/table-locations.js';

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Keys of a DeleteObjects request. */
  readonly keys: number;
}

/** Forwards every request to `upstream` unchanged (SigV4 signs the Host header, which is kept) and records it. */
class RecordingProxy {
  readonly requests: Recorded[] = [];
  private server: http.Server | undefined;

  constructor(private readonly upstream: URL) {}

  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', 'http://x');
        this.requests.push({
          method: req.method ?? '',
          path: decodeURIComponent(url.pathname),
          query: url.searchParams,
          keys: url.searchParams.has('delete') ? [...body.toString().matchAll(/<Key>/g)].length : 0,
        });
        const up = http.request(
          { host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers: req.headers },
          (upRes) => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            upRes.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const s3 = s3Available('expiration request counts on S3');

describe.skipIf(!s3)('snapshot expiration on the S3 server: requests per file', () => {
  let proxy: RecordingProxy;
  let endpoint = '';
  beforeAll(async () => {
    proxy = new RecordingProxy(new URL(s3TestOptions().endpoint!));
    endpoint = await proxy.listen();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('25 snapshots in batches of 10: one DeleteObjects, one lone DELETE and one EARLIEST write per batch', async () => {
    const io = new S3FileIO(s3TestOptions({ endpoint }));
    try {
      await onS3Table('expire-requests', { fields: [{ name: 'id', type: 'INT' }] }, async (table, direct) => {
        const location = table.location;
        // Overwrites: every expired snapshot frees its data file, manifests and lists.
        for (let s = 1; s <= 30; s++) expect((await table.overwrite([{ id: s }])).status).toBe('committed');
        const paths = new TablePaths(location);

        proxy.requests.length = 0;
        const summary = await expireSnapshots(
          { fileIO: io, paths },
          { retainMin: 5, expireLimit: 1000, olderThanMs: Date.now() + 60_000, snapshotBatchSize: 10 },
        );
        expect(summary.snapshotsExpired).toBe(25);
        expect(await new SnapshotManager(direct, paths).sortedIds()).toEqual([26, 27, 28, 29, 30]);

        const reqs = proxy.requests;
        const deleteObjects = reqs.filter((r) => r.method === 'POST' && r.query.has('delete'));
        const singleDeletes = reqs.filter((r) => r.method === 'DELETE');
        const earliestWrites = reqs.filter((r) => r.method === 'PUT' && r.path.endsWith('/snapshot/EARLIEST'));
        const heads = reqs.filter((r) => r.method === 'HEAD');
        // Snapshot files 1..25 in batches [1,10], [11,20], [21,25]: 9 + 9 + 4 keys per
        // DeleteObjects, the batch's newest file alone, EARLIEST (11, 21, 26) before each batch.
        expect(singleDeletes.map((r) => r.path.split('/').pop())).toEqual(['snapshot-10', 'snapshot-20', 'snapshot-25']);
        expect(earliestWrites).toHaveLength(3);
        // Data files, manifests, manifest lists: one request per kind (fewer than 1,000 keys each),
        // then the three snapshot batches.
        expect(deleteObjects.map((r) => r.keys).slice(-3)).toEqual([9, 9, 4]);
        expect(deleteObjects.length).toBeLessThanOrEqual(3 + 3);
        const keys = deleteObjects.reduce((n, r) => n + r.keys, 0);
        expect(keys + singleDeletes.length).toBe(summary.filesDeleted);
        // Requests that delete per file deleted: 9 for 25 snapshots' worth of files.
        expect((deleteObjects.length + singleDeletes.length) / summary.filesDeleted).toBeLessThan(0.1);
        // Nothing is probed before deletion: the only HEADs are the hint checks (earliest, latest).
        expect(heads.length).toBeLessThanOrEqual(4);
        console.log(
          `[expire-s3-requests] ${summary.filesDeleted} files: ${deleteObjects.length} DeleteObjects, ${singleDeletes.length} DELETE, ` +
            `${earliestWrites.length} EARLIEST writes, ${reqs.filter((r) => r.method === 'GET').length} GET, ${heads.length} HEAD`,
        );
      });
    } finally {
      await io.close();
    }
  }, 300_000);
});
