/**
 * `tidemark sql` through the built binary, on local disk and the real S3 server: plain append
 * tables (handed to DuckDB as Parquet file lists on disk), primary-key tables (merged by tidemark
 * first), time travel with @snapshot/@tag, a renamed column, joins and the result formats. The
 * message for a missing DuckDB is checked by test/packed-install.test.ts, where it is not installed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinPath } from '@tidemark/storage';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { cliFor, lines } from './support/cli-backend.js';
import { columns } from './support/table-definitions.mjs';

let duckdb = true;
try {
  await import('@duckdb/node-api');
} catch (e) {
  duckdb = false;
  console.warn(`[tidemark] SKIPPED tidemark sql tests: @duckdb/node-api cannot be loaded (${(e as Error).message})`);
}

const outDir = mkdtempSync(join(tmpdir(), 'tidemark-sql-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

// Backends and cases share nothing but the tables they only read, so they all run concurrently:
// each case is a few CLI processes, and the machine's cores (and the S3 server's latency) overlap them.
// Cases running side by side each take longer than alone: the timeout is a hang guard, not a speed check.
describe.concurrent.each(storageBackends('cli sql'))('$name', { timeout: 180_000 }, (backend) => {
  const cli = cliFor(backend);
  let wh: BackendWarehouse | undefined;
  let orders = '';
  let users = '';
  const sql = (query: string, ...rest: string[]) => cli(['sql', query, '--table', `o=${orders}`, '--table', `u=${users}`, ...rest]);
  const rows = async (query: string, ...rest: string[]): Promise<unknown[]> => {
    const r = await sql(query, ...rest);
    expect(r.stderr).not.toMatch(/tidemark|Error/);
    expect(r.code).toBe(0);
    return lines(r.stdout).map((l) => JSON.parse(l) as unknown);
  };

  beforeAll(async () => {
    if (!backend.available || !duckdb) return;
    wh = await backend.open();
    orders = joinPath(wh.root, 'shop.db', 'orders');
    users = joinPath(wh.root, 'shop.db', 'users');
    const orderSchema = JSON.stringify(columns('id BIGINT NOT NULL', 'user_id BIGINT', 'amount DECIMAL(10, 2)', 'day STRING NOT NULL'));
    const userSchema = JSON.stringify(columns('id BIGINT NOT NULL', 'name STRING'));
    // The two tables are independent: each one's commands run in order, the two side by side.
    await Promise.all([
      (async () => {
        expect((await cli(['create', orders, '--schema', orderSchema, '--partition', 'day'])).code).toBe(0);
        await cli(['write', orders], {
          stdin: '{"id":1,"user_id":1,"amount":"10.00","day":"2024-05-01"}\n{"id":2,"user_id":2,"amount":"2.50","day":"2024-05-01"}\n',
        });
        await cli(['write', orders], { stdin: '{"id":3,"user_id":1,"amount":"5.25","day":"2024-05-02"}\n' });
        await cli(['tag', 'create', orders, 'first', '--snapshot', '1']);
      })(),
      (async () => {
        expect((await cli(['create', users, '--schema', userSchema, '--primary-key', 'id', '--option', 'bucket=1'])).code).toBe(0);
        await cli(['write', users], { stdin: '{"id":1,"name":"ada"}\n{"id":2,"name":"bob"}\n' });
        await cli(['write', users], { stdin: '{"id":2,"name":"bobby"}\n' });
      })(),
    ]);
  }, 120_000);
  afterAll(async () => wh?.cleanup());

  describe.skipIf(!backend.available || !duckdb)('sql', () => {
    it('aggregates an append table; partition directories do not turn STRING columns into dates', async () => {
      expect(await rows('SELECT day, typeof(day) AS t, count(*) AS n, sum(amount) AS total FROM o GROUP BY day ORDER BY day')).toEqual([
        { day: '2024-05-01', t: 'VARCHAR', n: 2, total: '12.50' },
        { day: '2024-05-02', t: 'VARCHAR', n: 1, total: '5.25' },
      ]);
    });

    it('reads a primary-key table merged (one row per key, the latest value) and joins it', async () => {
      expect(await rows('SELECT id, name FROM u ORDER BY id')).toEqual([
        { id: 1, name: 'ada' },
        { id: 2, name: 'bobby' },
      ]);
      expect(await rows('SELECT u.name, sum(o.amount) AS spent FROM o JOIN u ON o.user_id = u.id GROUP BY u.name ORDER BY u.name')).toEqual(
        [
          { name: 'ada', spent: '15.25' },
          { name: 'bobby', spent: '2.50' },
        ],
      );
    });

    it('time-travels with @snapshot and @tag', async () => {
      const at = (ref: string) => cli(['sql', 'SELECT count(*) AS n FROM t', '--table', `t=${ref}`]);
      expect((await at(`${orders}@1`)).stdout).toBe('{"n":2}\n');
      expect((await at(`${orders}@first`)).stdout).toBe('{"n":2}\n');
      expect((await at(`${users}@1`)).stdout).toBe('{"n":2}\n');
      expect((await cli(['sql', 'SELECT name FROM t WHERE id = 2', '--table', `t=${users}@1`])).stdout).toBe('{"name":"bob"}\n');
      const missing = await at(`${orders}@nope`);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("tag 'nope' does not exist");
    });

    it('reads a table after a column rename by field id', async () => {
      const t = joinPath(wh!.root, 'shop.db', 'renamed');
      const schema = JSON.stringify(columns('k INT', 'old_name STRING'));
      expect((await cli(['create', t, '--schema', schema])).code).toBe(0);
      await cli(['write', t], { stdin: '{"k":1,"old_name":"x"}\n' });
      expect((await cli(['alter', t, 'rename-column', 'old_name', 'new_name'])).code).toBe(0);
      await cli(['write', t], { stdin: '{"k":2,"new_name":"y"}\n' });
      const r = await cli(['sql', 'SELECT k, new_name FROM t ORDER BY k', '--table', `t=${t}`]);
      expect(r.stdout).toBe('{"k":1,"new_name":"x"}\n{"k":2,"new_name":"y"}\n');
    });

    it('prints the result as a table, csv, Arrow and Parquet', async () => {
      const q = "SELECT id, CASE WHEN id = 1 THEN NULL ELSE 'null' END AS s FROM o WHERE id < 3 ORDER BY id";
      expect((await sql(q, '--format', 'table')).stdout).toBe('id | s\n---+-------\n 1 | NULL\n 2 | "null"\n');
      expect((await sql(q, '--format', 'csv')).stdout).toBe('id,s\r\n1,\r\n2,null\r\n');
      const arrowFile = join(outDir, `${backend.name}.arrow`);
      expect((await sql(q, '--format', 'arrow', '--output', arrowFile)).code).toBe(0);
      const t = tableFromIPC(readFileSync(arrowFile));
      expect(t.numRows).toBe(2);
      expect(t.schema.fields.map((f) => f.name)).toEqual(['id', 's']);
      const parquetFile = join(outDir, `${backend.name}.parquet`);
      expect((await sql('SELECT * FROM o', '--format', 'parquet', '--output', parquetFile)).code).toBe(0);
      const back = await cli(['sql', `SELECT count(*) AS n, sum(amount) AS s FROM read_parquet('${parquetFile}')`]);
      expect(back.stdout).toBe('{"n":3,"s":"17.75"}\n');
    });

    it('reports a bad query, a bad --table and an unknown table clearly', async () => {
      const bad = await sql('SELEC 1');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^tidemark sql: the query failed: Parser Error: syntax error at or near "SELEC"/m);
      const syntax = await cli(['sql', 'SELECT 1', '--table', `1x=${orders}`]);
      expect(syntax.code).toBe(2);
      expect(syntax.stderr).toContain("--table '1x=");
      const typo = await cli(['sql', 'SELECT 1', '--table', `t=${joinPath(wh!.root, 'shop.db', 'order')}`]);
      expect(typo.code).toBe(1);
      expect(typo.stderr).toContain('(did you mean orders?)');
    });
  });
});
