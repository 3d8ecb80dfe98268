/**
 * `tidemark db create|list|drop` and `tidemark table list|drop` through the built binary on a
 * warehouse on local disk and on the real S3 server; and the messages that point a user who
 * mistyped a table path at the tables that exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinPath } from '@tidemark/storage';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { cliFor, lines } from './support/cli-backend.js';

const SCHEMA = JSON.stringify([
  { name: 'id', type: 'BIGINT' },
  { name: 'v', type: 'STRING' },
]);

// The backends share nothing, so they run concurrently; the cases of one backend change its
// warehouse in turn (a database created, a table and a database dropped) and stay in order.
// Cases running side by side each take longer than alone: the timeout is a hang guard, not a speed check.
describe.concurrent.each(storageBackends('cli warehouse'))('$name', { timeout: 180_000 }, (backend) => {
  const cli = cliFor(backend);
  let wh: BackendWarehouse | undefined;
  let root = '';
  const json = async (args: string[]): Promise<Record<string, unknown>> => {
    const r = await cli([...args, '--json']);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    if (!backend.available) return;
    wh = await backend.open();
    root = wh.root;
    await Promise.all(
      ['shop.db/orders', 'shop.db/users', 'crm.db/leads'].map(async (t) => {
        expect((await cli(['create', joinPath(root, t), '--schema', SCHEMA])).code).toBe(0);
        expect((await cli(['write', joinPath(root, t)], { stdin: '{"id":1,"v":"a"}\n{"id":2,"v":null}\n' })).code).toBe(0);
      }),
    );
  }, 120_000);
  afterAll(async () => wh?.cleanup());

  describe.skipIf(!backend.available).sequential('warehouse commands', () => {
    it('db list and table list show what is there, as text and JSON', async () => {
      expect(await json(['db', 'list', root])).toEqual({ warehouse: root, databases: ['crm', 'shop'] });
      expect(lines((await cli(['db', 'list', root])).stdout)).toEqual(['crm', 'shop']);
      expect(await json(['table', 'list', root, 'shop'])).toEqual({
        warehouse: root,
        tables: [
          { database: 'shop', table: 'orders', location: joinPath(root, 'shop.db', 'orders') },
          { database: 'shop', table: 'users', location: joinPath(root, 'shop.db', 'users') },
        ],
      });
      const all = lines((await cli(['table', 'list', root])).stdout);
      expect(all.slice(2).map((l) => l.split(' | ')[0]!.trim())).toEqual(['crm.leads', 'shop.orders', 'shop.users']);
    });

    it('db create makes a database a table can go in; on object stores it only checks the name', async () => {
      const created = await json(['db', 'create', root, 'sales']);
      expect(created).toMatchObject({ database: 'sales', location: joinPath(root, 'sales.db'), created: true });
      const dbs = (await json(['db', 'list', root]))['databases'];
      // A local database is a directory at once; on S3 it appears with its first table.
      if (backend.name === 'local disk') expect(dbs).toEqual(['crm', 'sales', 'shop']);
      else expect(dbs).toEqual(['crm', 'shop']);
      expect((await cli(['create', joinPath(root, 'sales.db', 'q1'), '--schema', SCHEMA])).code).toBe(0);
      expect((await json(['db', 'list', root]))['databases']).toEqual(['crm', 'sales', 'shop']);
      const again = await cli(['db', 'create', root, 'sales']);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("database 'sales' already exists");
      expect((await cli(['db', 'create', root, 'sales', '--if-not-exists'])).code).toBe(0);
      const bad = await cli(['db', 'create', root, 'a/b']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("invalid database name 'a/b'");
    });

    it('table drop refuses without --yes, shows its footprint with --dry-run, and drops with --yes', async () => {
      const users = joinPath(root, 'shop.db', 'users');
      const refused = await cli(['table', 'drop', root, 'shop.users']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^tidemark table: dropping table shop.users deletes \d+ file\(s\), .* add --yes/m);
      const dry = await json(['table', 'drop', root, 'shop.users', '--dry-run']);
      expect(dry).toMatchObject({ table: 'shop.users', location: users, dryRun: true });
      expect(dry['files'] as number).toBeGreaterThanOrEqual(4); // schema, snapshot, manifests, a data file
      expect(lines((await cli(['read', users])).stdout)).toHaveLength(2);
      const dropped = await json(['table', 'drop', root, 'shop.users', '--yes']);
      expect(dropped).toMatchObject({ table: 'shop.users', files: dry['files'], bytes: dry['bytes'], dryRun: false });
      expect(await json(['table', 'list', root, 'shop'])).toMatchObject({ tables: [{ table: 'orders' }] });
      const gone = await cli(['read', users]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`tables in ${joinPath(root, 'shop.db')}: orders`);
      const missing = await cli(['table', 'drop', root, 'shop.nope', '--yes']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("tables in database 'shop': orders");
    });

    it('db drop needs --cascade for a database with tables and --yes to delete', async () => {
      const withTables = await cli(['db', 'drop', root, 'crm', '--yes']);
      expect(withTables.code).toBe(1);
      expect(withTables.stderr).toContain("database 'crm' holds 1 table(s) (leads); add --cascade");
      const dry = await json(['db', 'drop', root, 'crm', '--cascade', '--dry-run']);
      expect(dry).toMatchObject({ database: 'crm', tables: ['leads'], dryRun: true });
      expect((await cli(['count', joinPath(root, 'crm.db', 'leads')])).stdout).toBe('2\n');
      expect((await cli(['db', 'drop', root, 'crm', '--cascade', '--yes'])).stdout).toMatch(
        /^dropped database 'crm': 1 table\(s\) \(leads\)/,
      );
      expect((await json(['db', 'list', root]))['databases']).not.toContain('crm');
      const unknown = await cli(['db', 'drop', root, 'crm', '--yes']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("database 'crm' does not exist");
    });

    it('a mistyped table or database path names the tables and databases that exist', async () => {
      const typo = await cli(['read', joinPath(root, 'shop.db', 'ordrs')]);
      expect(typo.code).toBe(1);
      expect(typo.stderr).toContain(`tables in ${joinPath(root, 'shop.db')}: orders`);
      expect(typo.stderr).toContain('(did you mean orders?)');
      const db = await cli(['snapshots', joinPath(root, 'shp.db', 'orders')]);
      expect(db.stderr).toContain("there is no database 'shp'");
      expect(db.stderr).toContain('(did you mean shop?)');
      const dbItself = await cli(['read', joinPath(root, 'shop.db')]);
      expect(dbItself.stderr).toContain(`${joinPath(root, 'shop.db')} is a database; its tables: orders`);
      const warehouse = await cli(['count', root]);
      expect(warehouse.stderr).toContain('looks like a warehouse');
    });

    it('a local warehouse that does not exist is an error; on S3 a missing prefix lists as empty', async () => {
      const missing = joinPath(root, 'no-such-warehouse');
      if (backend.name === 'local disk') {
        // A mistyped warehouse in a nightly job must fail, not "succeed" having done nothing.
        for (const args of [
          ['db', 'list', missing],
          ['table', 'list', missing],
          ['maintain', '--warehouse', missing, '--dry-run'],
        ]) {
          const r = await cli(args);
          expect(r.code, args.join(' ')).toBe(1);
          expect(r.stderr).toContain(`warehouse ${missing} does not exist`);
          expect(r.stdout).toBe('');
        }
      } else {
        // An object store has no directories: an empty prefix and a missing one look the same.
        expect(await json(['db', 'list', missing])).toEqual({ warehouse: missing, databases: [] });
        expect(await json(['table', 'list', missing])).toEqual({ warehouse: missing, tables: [] });
      }
    });
  });
});
