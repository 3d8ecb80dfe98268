/**
 * Table locations as users type them: `s3:bucket/path` (no `//`) is refused as bad usage instead of
 * writing to a local directory named `s3:bucket`, and `s3a://` (Hadoop, Flink and Spark configs)
 * addresses the same objects as `s3://` on the real S3 server. Run in this process through `main()`.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain, useCliS3Env } from './support/cli-main.js';
import { s3Available, s3TestBucket, uniquePrefix } from './support/s3.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-corpus-locations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const schema = '[{"name":"id","type":"INT"}]';

describe('a scheme without //', () => {
  const commands: Array<[string, string[], string?]> = [
    ['create', ['create', 's3:bucket/wh/db.db/t', '--schema', schema]],
    ['write', ['write', 's3:bucket/wh/db.db/t'], '{"id":1}\n'],
    ['read', ['read', 'S3A:bucket/t']],
    ['db list', ['db', 'list', 's3:bucket/wh']],
  ];
  for (const [name, argv, stdin] of commands) {
    it(`${name} refuses it with exit 2, naming the URI meant, and creates no local directory`, async () => {
      const r = await runMain(argv, { cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
      expect(r.stderr.split('\n')[0]).toMatch(
        /^tidemark [a-z ]+: Location s3a?:bucket\S* is not a valid location: write s3a?:\/\/bucket\//i,
      );
      expect(r.code).toBe(2);
      expect(readdirSync(dir)).toEqual([]);
    });
  }
});

describe.skipIf(!s3Available('s3a:// locations'))('s3a:// on the S3 server', () => {
  useCliS3Env();
  it(
    'a table created and written through s3a:// reads back through s3://',
    async () => {
      const key = `${s3TestBucket()}/${uniquePrefix('s3a')}/db.db/t`;
      expect((await runMain(['create', `s3a://${key}`, '--schema', schema])).code).toBe(0);
      const w = await runMain(['write', `s3a://${key}`], { stdin: '{"id":1}\n{"id":2}\n' });
      expect(w.stderr).toBe('');
      expect(w.code).toBe(0);
      const r = await runMain(['read', `s3://${key}`]);
      expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['{"id":1}', '{"id":2}']);
      const again = await runMain(['read', `s3a://${key}`, '--format', 'csv']);
      expect(again.stdout.split(/\r?\n/).filter(Boolean).sort()).toEqual(['1', '2', 'id']);
      expect(existsSync(join(dir, 's3a:'))).toBe(false);
    },
    4 * 30_000 + 30_000,
  );
});
