/**
 * The test S3 server's printed variables, used the way the README says: `eval "$(… start-server.sh
 * …)"` in a shell, then `tidemark` in that shell with nothing else set. They must export, and name
 * the endpoint the way tidemark reads it (`AWS_ENDPOINT_URL_S3`), or requests go to AWS. Uses
 * `status` on the running server's data dir (read-only: nothing is started or stopped).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TIDEMARK_BIN } from './support/cli-process.js';
import { s3Available, s3TestBucket, uniquePrefix } from './support/s3.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./s3/start-server.sh', import.meta.url));
const dataDir = process.env['S3_DATA_DIR'];
/** A shell environment holding only what any login shell has: no S3 or AWS variable leaks in. */
const bareEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp' };

describe.skipIf(!s3Available('S3 server env lines') || dataDir === undefined)('start-server.sh env lines', () => {
  it('eval-ed in a shell, point the tidemark command at the server', async () => {
    const location = `s3://${s3TestBucket()}/${uniquePrefix('server-env')}/db.db/t`;
    const shell = [
      `eval "$(bash '${script}' status '${dataDir!}')"`,
      `node '${TIDEMARK_BIN}' create '${location}' --schema '[{"name":"id","type":"INT"}]'`,
      `printf '{"id":7}\\n' | node '${TIDEMARK_BIN}' write '${location}'`,
      `node '${TIDEMARK_BIN}' read '${location}'`,
    ].join(' && ');
    // Four processes in a row: a hang guard of 2 minutes each at most.
    const r = await run('bash', ['-c', shell], { env: { ...bareEnv, TIDEMARK_NO_PROGRESS: '1' }, timeout: 480_000 }).catch(
      (e: { stdout?: string; stderr?: string; message: string }) => e,
    );
    expect('stderr' in r ? r.stderr : '').toBe('');
    expect(r.stdout).toContain('{"id":7}\n');
  }, 540_000);

  it('name the endpoint both ways and export every variable', async () => {
    const { stdout } = await run('bash', [script, 'status', dataDir!]);
    const lines = stdout.trim().split('\n');
    for (const l of lines) expect(l).toMatch(/^export [A-Z0-9_]+=/);
    const names = lines.map((l) => /^export ([A-Z0-9_]+)=/.exec(l)![1]);
    expect(names).toEqual(
      expect.arrayContaining([
        'S3_ENDPOINT',
        'AWS_ENDPOINT_URL_S3',
        'AWS_ACCESS_KEY_ID',
        'AWS_SECRET_ACCESS_KEY',
        'AWS_REGION',
        'S3_BUCKET',
      ]),
    );
  });
});

describe('start-server.sh without arguments', () => {
  it('status takes the default data dir instead of printing the usage', async () => {
    const r = await run('bash', [script, 'status'], { env: bareEnv }).catch((e: { code?: number; stdout: string; stderr: string }) => e);
    expect(r.stderr).not.toMatch(/usage/);
  });
});
