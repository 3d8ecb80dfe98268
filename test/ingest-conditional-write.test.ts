/**
 * Ingestion refuses to commit to a store that does not honour `If-None-Match: *`: an HTTP proxy in
 * front of the real S3 server answers every refused conditional PUT (412) with 200, as a store that
 * ignores the header would. `tidemark ingest` and the sink API then stop with
 * ConditionalWriteNotSupportedError before any snapshot is written, and the table is unchanged;
 * the same ingestion straight to the server succeeds.
 */
import type http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionalWriteNotSupportedError, S3FileIO, clearConditionalWriteVerdicts } from '@tidemark/storage';
import { FileSystemCatalog, SnapshotManager, metadataPaths } from '@tidemark/core';
import { JsonLinesFileSource, runIngest } from '@tidemark/sink';
import { cliS3Variables, s3Available, s3TestEnv, s3TestOptions, s3TestRoot } from './support/s3.js';
import { runMain, setProcessEnv } from './support/cli-main.js';
import { ForwardingProxy } from './support/forwarding-proxy.mjs';

/** Forwards everything to the server, but turns a refused conditional PUT (412) into a 200. */
class IgnoringConditionalPutsProxy extends ForwardingProxy {
  /** Conditional PUTs the server refused and this proxy reported as written. */
  faked = 0;

  protected override intercept(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    const conditional = req.method === 'PUT' && req.headers['if-none-match'] !== undefined;
    this.forward(req, body, (upRes) => {
      if (conditional && upRes.statusCode === 412) {
        upRes.resume();
        this.faked++;
        res.writeHead(200, { 'content-length': '0', etag: '"00000000000000000000000000000000"' });
        res.end();
        return;
      }
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
  }
}

const available = s3Available('ingest to a store without conditional writes');

describe.skipIf(!available)('ingestion to a store that ignores If-None-Match', () => {
  let proxy: IgnoringConditionalPutsProxy;
  let proxyEndpoint: string;
  let direct: S3FileIO;
  let viaProxy: S3FileIO;
  let dir: string;
  let source: string;
  const root = available ? s3TestRoot('ingest-conditional') : '';
  let restoreEnv = (): void => undefined;

  beforeAll(async () => {
    clearConditionalWriteVerdicts();
    proxy = new IgnoringConditionalPutsProxy(s3TestEnv()!.endpoint);
    proxyEndpoint = await proxy.listen();
    direct = new S3FileIO(s3TestOptions());
    viaProxy = new S3FileIO(s3TestOptions({ endpoint: proxyEndpoint }));
    dir = await mkdtemp(join(tmpdir(), 'tidemark-ingest-cw-'));
    source = join(dir, 'rows.jsonl');
    await writeFile(source, Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, v: `r${i}` })).join('\n') + '\n');
  });
  afterAll(async () => {
    restoreEnv();
    await viaProxy?.close();
    await proxy?.close();
    if (direct) {
      const paths = async function* (): AsyncGenerator<string> {
        for await (const st of direct.list(root)) yield st.path;
      };
      await direct.deleteMany(paths());
      await direct.close();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
    clearConditionalWriteVerdicts();
  });

  async function newTable(name: string): Promise<string> {
    const catalog = new FileSystemCatalog(`${root}/wh`, { fileIO: direct });
    await catalog.createTable(`db.${name}`, {
      fields: [
        { name: 'id', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
    });
    return catalog.tableLocation(`db.${name}`);
  }

  async function snapshotCount(location: string): Promise<number> {
    let n = 0;
    for await (const _ of new SnapshotManager(direct, metadataPaths(location)).iterateForward()) n++;
    return n;
  }

  it('the sink API stops with ConditionalWriteNotSupportedError and commits nothing', async () => {
    const location = await newTable('api');
    const err = await runIngest({
      table: location,
      fileIO: viaProxy,
      source: new JsonLinesFileSource(source),
      commitUser: 'api-user',
      checkpointEvery: 5,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConditionalWriteNotSupportedError);
    expect(proxy.faked).toBeGreaterThan(0);
    expect(await snapshotCount(location)).toBe(0);

    // The same ingestion straight to the server commits every row.
    const ok = await runIngest({
      table: location,
      fileIO: direct,
      source: new JsonLinesFileSource(source),
      commitUser: 'api-user',
      checkpointEvery: 5,
    });
    expect(ok.status).toBe('source-done');
    expect(ok.records).toBe(20);
    expect(await snapshotCount(location)).toBeGreaterThan(0);
  });

  it('`tidemark ingest` exits with the conditional-write error and commits nothing', async () => {
    const location = await newTable('cli');
    restoreEnv = setProcessEnv({ ...cliS3Variables(s3TestEnv()!, proxyEndpoint), TIDEMARK_S3_SKIP_CONDITIONAL_CHECK: undefined });
    const { code, stderr } = await runMain([
      'ingest',
      location,
      '--source',
      source,
      '--commit-user',
      'cli-user',
      '--checkpoint-every',
      '5',
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toContain('does not support conditional writes');
    expect(await snapshotCount(location)).toBe(0);
  });
});
