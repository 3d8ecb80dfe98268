/**
 * S3 setup mistakes through the built binary, with only the variables a user would have set: each
 * exits 1 with one line naming the variable to set or the endpoint tried (no "unexpected error", no
 * SDK or OpenSSL text), and no S3 command prints the AWS SDK's Node-version warning. The binary,
 * not `main()`, because the warning is a process-level one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTidemark } from './support/cli-process.js';
import { closedPort } from './support/net-ports.js';
import { cliS3Variables, s3Available, s3TestBucket, s3TestEnv, uniquePrefix } from './support/s3.js';

const home = mkdtempSync(join(tmpdir(), 'tidemark-s3-setup-home-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Every AWS/S3 variable of this process unset, HOME empty: a shell where nothing S3 is configured. */
function userEnv(set: Record<string, string>): Record<string, string | undefined> {
  const cleared = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('AWS_') || k.startsWith('S3_') || k === 'HADOOP_CONF_DIR')
      .map((k) => [k, undefined]),
  );
  return { ...cleared, HOME: home, AWS_EC2_METADATA_DISABLED: 'true', ...set };
}

/** Hang guard of one binary run (a loaded machine can take tens of seconds to start node). */
const GUARD = { timeoutMs: 120_000 };
/** A test's timeout: its binary runs' guards plus room for the test itself. */
const budget = (runs: number): number => runs * GUARD.timeoutMs + 30_000;
const keys = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret-example', AWS_REGION: 'us-east-1' };

describe('S3 setup mistakes', () => {
  it(
    'no credentials: names the variables to set',
    async () => {
      const port = await closedPort();
      const r = await runTidemark(['read', 's3://bucket/wh/db.db/t'], {
        env: userEnv({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` }),
        ...GUARD,
      });
      expect(r.stderr).toBe(
        'tidemark read: no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or ' +
          'fs.s3a.access.key and fs.s3a.secret.key in core-site.xml)\n',
      );
      expect(r.code).toBe(1);
    },
    budget(1),
  );

  it(
    'an endpoint without http://: shows the URL meant',
    async () => {
      const r = await runTidemark(['create', 's3://bucket/wh/db.db/t', '--schema', '[{"name":"id","type":"INT"}]'], {
        env: userEnv({ ...keys, AWS_ENDPOINT_URL_S3: '127.0.0.1:7480' }),
        ...GUARD,
      });
      expect(r.stderr).toBe(
        "tidemark create: AWS_ENDPOINT_URL_S3 = '127.0.0.1:7480' has no scheme: write http://127.0.0.1:7480 (or https:// for TLS)\n",
      );
      expect(r.code).toBe(1);
    },
    budget(1),
  );

  it(
    'a port nothing listens on: names the endpoint tried and where it came from',
    async () => {
      const port = await closedPort();
      const r = await runTidemark(['snapshots', 's3://bucket/wh/db.db/t'], {
        env: userEnv({ ...keys, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` }),
        ...GUARD,
      });
      expect(r.stderr).toBe(
        `tidemark snapshots: cannot connect to the S3 endpoint http://127.0.0.1:${port} (from AWS_ENDPOINT_URL_S3): connection refused; ` +
          'is the server running, and is that its address?\n',
      );
      expect(r.code).toBe(1);
    },
    budget(1),
  );
});

describe.skipIf(!s3Available('the SDK Node-version warning'))('a working S3 setup', () => {
  it(
    'prints nothing on stderr (no SDK Node-version warning)',
    async () => {
      const env = userEnv(cliS3Variables(s3TestEnv()!));
      const t = `s3://${s3TestBucket()}/${uniquePrefix('sdk-warning')}/db.db/t`;
      const created = await runTidemark(['create', t, '--schema', '[{"name":"id","type":"INT"}]'], { env, ...GUARD });
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
    },
    budget(1),
  );
});
