/**
 * The `tidemark` CLI on primary-key tables (in-process `main()`, the code the binary runs):
 * `write` upserts, `write --row-kind-field`, `delete --where | --input`, `ingest --row-kind-field`,
 * and the errors for append tables and bad row kinds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, type MainResult } from './support/cli-main.js';

let dir = '';

const run = (argv: string[], stdin = ''): Promise<MainResult> => runMain(argv, { stdin, cwd: dir });

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
const jsonl = (rows: object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** The table's rows as `id=v`, sorted by id. */
async function contents(table: string): Promise<string[]> {
  const r = await run(['read', table, '--format', 'jsonl']);
  expect(r.stderr).toBe('');
  return lines(r.stdout)
    .map((l) => JSON.parse(l) as { id: number; v: string | null })
    .sort((a, b) => a.id - b.id)
    .map((x) => `${x.id}=${x.v}`);
}

async function snapshotCount(table: string): Promise<number> {
  return lines((await run(['snapshots', table, '--json'])).stdout).length;
}

const SCHEMA = '[{"name":"id","type":"INT NOT NULL"},{"name":"v","type":"STRING"}]';

async function createPk(name: string): Promise<string> {
  const table = `wh/db.db/${name}`;
  const r = await run(['create', table, '--schema', SCHEMA, '--primary-key', 'id', '--option', 'bucket=2']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return table;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidemark-cli-pk-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tidemark write on a primary-key table', () => {
  it('upserts: the latest row of each key wins, within one input and across writes', async () => {
    const t = await createPk('upsert');
    const w = await run(
      ['write', t],
      jsonl([
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
        { id: 1, v: 'a2' },
      ]),
    );
    expect(w.stderr).toBe('');
    expect(w.stdout).toBe('committed snapshot 1 (3 rows)\n');
    expect(await contents(t)).toEqual(['1=a2', '2=b']);
    expect(
      (
        await run(
          ['write', t],
          jsonl([
            { id: 2, v: 'b2' },
            { id: 3, v: 'c' },
          ]),
        )
      ).code,
    ).toBe(0);
    expect(await contents(t)).toEqual(['1=a2', '2=b2', '3=c']);
  });

  it('--row-kind-field: +I/+U upsert, -D deletes, the field is not a column; the summary counts kinds', async () => {
    const t = await createPk('kinds');
    expect((await run(['write', t], jsonl([1, 2, 3, 4].map((id) => ({ id, v: `v${id}` }))))).code).toBe(0);
    writeFileSync(
      join(dir, 'changes.jsonl'),
      jsonl([
        { id: 1, v: 'v1', op: '-U' },
        { id: 1, v: 'w1', op: '+U' },
        { id: 2, op: '-D' },
        { id: 5, v: 'v5', op: '+I' },
        { id: 3, v: 'w3' },
      ]),
    );
    const w = await run(['write', t, '--input', 'changes.jsonl', '--row-kind-field', 'op']);
    expect(w.stderr).toBe('');
    expect(w.stdout).toBe('committed snapshot 2 (5 rows: 2 +I, 1 -U, 1 +U, 1 -D)\n');
    expect(await contents(t)).toEqual(['1=w1', '3=w3', '4=v4', '5=v5']);
    const schema = await run(['schema', t, '--json']);
    expect(schema.stdout).not.toContain('"op"');
  });

  it('refuses a bad row kind naming the line, and commits nothing', async () => {
    const t = await createPk('badkind');
    const w = await run(
      ['write', t, '--row-kind-field', 'op'],
      jsonl([
        { id: 1, v: 'a', op: '+I' },
        { id: 2, v: 'b', op: 'upsert' },
      ]),
    );
    expect(w.code).toBe(1);
    expect(lines(w.stderr)).toEqual([`tidemark write: input line 2: field 'op' must be one of +I, -U, +U, -D; got "upsert"`]);
    expect(await snapshotCount(t)).toBe(0);
  });

  it('refuses --row-kind-field on an append table and when it names a column', async () => {
    expect((await run(['create', 'wh/db.db/app', '--schema', SCHEMA])).code).toBe(0);
    const a = await run(['write', 'wh/db.db/app', '--row-kind-field', 'op'], jsonl([{ id: 1, v: 'a', op: '+I' }]));
    expect(a.code).toBe(1);
    expect(a.stderr).toContain('--row-kind-field applies to primary-key tables only');
    const t = await createPk('colkind');
    const c = await run(['write', t, '--row-kind-field', 'v'], jsonl([{ id: 1, v: '+I' }]));
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("--row-kind-field 'v' is a column of");
  });
});

describe('tidemark delete', () => {
  it('--where deletes the matching keys and prints how many; --json prints a summary', async () => {
    const t = await createPk('delwhere');
    expect((await run(['write', t], jsonl([1, 2, 3, 4, 5].map((id) => ({ id, v: id % 2 === 0 ? 'even' : 'odd' }))))).code).toBe(0);
    const d = await run(['delete', t, '--where', "v = 'even'"]);
    expect(d.stderr).toBe('');
    expect(d.stdout).toBe('deleted 2 keys: committed snapshot 2\n');
    expect(await contents(t)).toEqual(['1=odd', '3=odd', '5=odd']);
    const j = await run(['delete', t, '--where', 'id >= 5', '--json']);
    expect(j.code).toBe(0);
    expect(JSON.parse(lines(j.stdout)[0]!)).toEqual({
      command: 'delete',
      table: join(dir, t),
      dryRun: false,
      status: 'committed',
      deleted: 1,
      snapshotId: 3,
      baseSnapshotId: 2,
      rowsMatched: 1,
      method: 'primary-key-records',
      partitions: [{ partition: {}, rows: 1 }],
      deletionVectorFiles: [],
    });
    expect(await contents(t)).toEqual(['1=odd', '3=odd']);
  });

  it('--input deletes the keys listed (jsonl and csv), other columns ignored', async () => {
    const t = await createPk('delinput');
    expect((await run(['write', t], jsonl([1, 2, 3, 4].map((id) => ({ id, v: `v${id}` }))))).code).toBe(0);
    writeFileSync(join(dir, 'keys.jsonl'), jsonl([{ id: 1 }, { id: 3, v: 'ignored' }]));
    const d = await run(['delete', t, '--input', 'keys.jsonl']);
    expect(d.stderr).toBe('');
    expect(d.stdout).toBe('deleted 2 keys: committed snapshot 2\n');
    expect(await contents(t)).toEqual(['2=v2', '4=v4']);
    const c = await run(['delete', t, '--input', '-', '--format', 'csv'], 'id\n4\n');
    expect(c.stdout).toBe('deleted 1 key: committed snapshot 3\n');
    expect(await contents(t)).toEqual(['2=v2']);
  });

  it('names the input line of a key without its primary-key column', async () => {
    const t = await createPk('delbad');
    const d = await run(['delete', t, '--input', '-'], jsonl([{ id: 1 }, { v: 'x' }]));
    expect(d.code).toBe(1);
    expect(lines(d.stderr)).toEqual(["tidemark delete: input line 2: primary-key column 'id' is missing or null"]);
  });

  it('refuses append tables without deletion vectors with a clear error naming the option, exit 1', async () => {
    expect((await run(['create', 'wh/db.db/app2', '--schema', SCHEMA])).code).toBe(0);
    const d = await run(['delete', 'wh/db.db/app2', '--where', 'id = 1']);
    expect(d.code).toBe(1);
    expect(lines(d.stderr)).toHaveLength(1);
    expect(d.stderr).toContain(
      "is an append table (no primary key) without deletion vectors: rows can be deleted only with the table option 'deletion-vectors.enabled' = 'true'",
    );
  });
});

describe('tidemark ingest on a primary-key table', () => {
  it('--row-kind-field with 3 writers: every key holds its latest version', async () => {
    const t = await createPk('ingest');
    const records: object[] = [];
    const latest = new Map<number, string>();
    for (let i = 0; i < 300; i++) {
      const id = (i * 13) % 40;
      if (i % 11 === 5 && latest.has(id)) {
        records.push({ id, op: '-D' });
        latest.delete(id);
      } else {
        records.push({ id, v: `r${i}`, op: latest.has(id) ? '+U' : '+I' });
        latest.set(id, `r${i}`);
      }
    }
    writeFileSync(join(dir, 'source.jsonl'), jsonl(records));
    const r = await run([
      'ingest',
      t,
      '--source',
      'source.jsonl',
      '--state',
      'ingest-state',
      '--checkpoint-every',
      '70',
      '--parallelism',
      '3',
      '--row-kind-field',
      'op',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(lines(r.stdout).pop()!)).toMatchObject({ status: 'source-done', records: 300 });
    const want = [...latest].sort((a, b) => a[0] - b[0]).map(([id, v]) => `${id}=${v}`);
    expect(await contents(t)).toEqual(want);
  });
});
