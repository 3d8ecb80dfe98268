/**
 * S3 setup mistakes, as a new user makes them: no credentials, an endpoint without `http://`, a
 * server that is not listening, TLS to a plain-HTTP server. Each is a {@link StorageConfigError}
 * (a user error) naming the variable to set or the endpoint tried, not the SDK's or OpenSSL's text.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3FileIO, StorageConfigError, resolveS3Config, type S3Options } from '../src/index.js';
import { closedPort } from '../../../test/support/net-ports.js';

const AWS_VARIABLES = Object.keys(process.env).filter((k) => k.startsWith('AWS_') || k === 'HADOOP_CONF_DIR');
const home = mkdtempSync(join(tmpdir(), 'tidemark-s3-setup-'));
let saved: Record<string, string | undefined> = {};

/** The process environment of a user who has set nothing for S3 (no ~/.aws either). */
beforeAll(() => {
  saved = Object.fromEntries([...AWS_VARIABLES, 'HOME'].map((k) => [k, process.env[k]]));
  for (const k of AWS_VARIABLES) delete process.env[k];
  process.env['HOME'] = home;
  // The SDK's chain would otherwise also ask the EC2 metadata service, which is not there either.
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
});
afterAll(() => {
  delete process.env['AWS_EC2_METADATA_DISABLED'];
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(home, { recursive: true, force: true });
});

const keys = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret-example' };
const fast = { maxAttempts: 2, retryBaseDelayMs: 1 };
const opened: S3FileIO[] = [];
function io(options: S3Options): S3FileIO {
  const f = new S3FileIO({ region: 'us-east-1', ...fast, ...options });
  opened.push(f);
  return f;
}
afterEach(async () => {
  for (const f of opened.splice(0)) await f.close();
});

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as Error,
  );
}

describe('an endpoint without a scheme', () => {
  it('from AWS_ENDPOINT_URL_S3 is refused, showing the URL meant', () => {
    const run = () => resolveS3Config({}, { AWS_ENDPOINT_URL_S3: '127.0.0.1:7480' });
    expect(run).toThrow(StorageConfigError);
    expect(run).toThrow("AWS_ENDPOINT_URL_S3 = '127.0.0.1:7480' has no scheme: write http://127.0.0.1:7480 (or https:// for TLS)");
    expect(() => resolveS3Config({}, { AWS_ENDPOINT_URL: 'minio:9000' })).toThrow(/^AWS_ENDPOINT_URL = 'minio:9000' has no scheme/);
  });

  it('from the options is refused the same way', () => {
    expect(() => resolveS3Config({ endpoint: 'localhost:9000' }, {})).toThrow(
      /^S3 option endpoint = 'localhost:9000' has no scheme: write http:\/\/localhost:9000/,
    );
  });
});

describe('a server that does not answer', () => {
  it('a refused port names the endpoint and the variable that set it', async () => {
    const port = await closedPort();
    process.env['AWS_ENDPOINT_URL_S3'] = `http://127.0.0.1:${port}`;
    try {
      const e = await failure(io(keys).read('s3://bucket/key'));
      expect(e).toBeInstanceOf(StorageConfigError);
      expect(e.message).toBe(
        `cannot connect to the S3 endpoint http://127.0.0.1:${port} (from AWS_ENDPOINT_URL_S3): connection refused; ` +
          'is the server running, and is that its address?',
      );
    } finally {
      delete process.env['AWS_ENDPOINT_URL_S3'];
    }
  });

  it('TLS to a plain-HTTP server says to use http://', async () => {
    const server: Server = createServer((_req, res) => res.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const e = await failure(io({ ...keys, endpoint: `https://127.0.0.1:${port}` }).read('s3://bucket/key'));
      expect(e).toBeInstanceOf(StorageConfigError);
      expect(e.message).toMatch(
        new RegExp(
          `^the S3 endpoint https://127\\.0\\.0\\.1:${port} \\(from the S3 option endpoint\\) does not answer TLS: use http://127\\.0\\.0\\.1:${port}`,
        ),
      );
      expect(e.message).not.toMatch(/ssl3|openssl|EPROTO/i);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('no credentials anywhere', () => {
  it('names the variables to set', async () => {
    const port = await closedPort();
    const e = await failure(io({ endpoint: `http://127.0.0.1:${port}` }).exists('s3://bucket/key'));
    expect(e).toBeInstanceOf(StorageConfigError);
    expect(e.message).toBe(
      'no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or fs.s3a.access.key and ' +
        'fs.s3a.secret.key in core-site.xml)',
    );
  });
});
