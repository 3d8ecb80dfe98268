/**
 * Helpers for suites that need the real S3 server. `npm test` (scripts/test.mjs) starts Ceph RGW
 * with test/s3/start-server.sh and exports S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_REGION and S3_BUCKET to vitest; a plain `npx vitest run` has none of them, and the S3
 * suites then skip with a visible notice instead of failing.
 */
import { randomBytes } from 'node:crypto';
import type { S3Options } from '@tidemark/storage';

/** The S3 settings the test runner exported, or undefined when no server is configured. */
export interface S3TestEnv {
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly bucket: string;
}

export function s3TestEnv(): S3TestEnv | undefined {
  const e = process.env;
  if (!e.S3_ENDPOINT || !e.S3_BUCKET || !e.AWS_ACCESS_KEY_ID || !e.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    endpoint: e.S3_ENDPOINT,
    region: e.AWS_REGION || 'us-east-1',
    accessKeyId: e.AWS_ACCESS_KEY_ID,
    secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
    bucket: e.S3_BUCKET,
  };
}

/**
 * The AWS_* variables that point the CLI (in this process or a child) at the server, the way a
 * user's shell does; `endpoint` replaces the server's own (a fault-injecting proxy in front of it).
 */
export function cliS3Variables(env: S3TestEnv, endpoint = env.endpoint): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: env.accessKeyId,
    AWS_SECRET_ACCESS_KEY: env.secretAccessKey,
    AWS_REGION: env.region,
  };
}

const warned = new Set<string>();

/**
 * True when an S3 server is configured. When it is not, prints (once per `suite`) a notice that
 * the suite's S3 tests are skipped, so a green run without S3 never looks like full coverage.
 */
export function s3Available(suite = 'S3 tests'): boolean {
  if (s3TestEnv()) return true;
  if (!warned.has(suite)) {
    warned.add(suite);
    console.warn(
      `[tidemark] SKIPPED ${suite}: no S3 server configured (S3_ENDPOINT, S3_BUCKET, AWS_ACCESS_KEY_ID, ` +
        'AWS_SECRET_ACCESS_KEY are unset). Run `npm test`, which starts one, or start one with ' +
        '`eval "$(npm run --silent s3:start)"` in this shell.',
    );
  }
  return false;
}

function requireEnv(): S3TestEnv {
  const env = s3TestEnv();
  if (!env) throw new Error('No S3 server configured: guard the suite with s3Available()');
  return env;
}

/** S3FileIO options for the configured server (path-style, explicit credentials), plus `overrides`. */
export function s3TestOptions(overrides: Partial<S3Options> = {}): S3Options {
  const env = requireEnv();
  return {
    endpoint: env.endpoint,
    region: env.region,
    accessKeyId: env.accessKeyId,
    secretAccessKey: env.secretAccessKey,
    forcePathStyle: true,
    ...overrides,
  };
}

/** The bucket the test server created. */
export function s3TestBucket(): string {
  return requireEnv().bucket;
}

/**
 * A key prefix no other suite or run uses: `tests/<name>-<time>-<random>`. Suites share one bucket
 * (and the server may be reused across runs), so every suite writes under its own prefix.
 */
export function uniquePrefix(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-');
  return `tests/${safe}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** `s3://<bucket>/<uniquePrefix(name)>`: a fresh root location for one suite. */
export function s3TestRoot(name: string): string {
  return `s3://${s3TestBucket()}/${uniquePrefix(name)}`;
}
