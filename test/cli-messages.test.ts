/**
 * Messages and layouts a user reads, through the built binary on a local table: a missing input
 * file, NULL against the string "null" in `--format table`, `tag list` times in UTC, and the
 * `snapshots` table fitting 100 columns. (Mistyped table paths: test/cli-warehouse.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTidemark } from './support/cli-process.js';
import { lines } from './support/cli-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-messages-'));
const table = join(dir, 'wh', 'db.db', 't');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const schema = JSON.stringify([
    { name: 'id', type: 'BIGINT' },
    { name: 'name', type: 'STRING' },
  ]);
  expect((await runTidemark(['create', table, '--schema', schema])).code).toBe(0);
  const user = 'ingest-pipeline-eu-west-1-orders-0f3c9a2e-5d1b-4c8e-9f00-123456789abc';
  const w = await runTidemark(['write', table, '--commit-user', user, '--commit-identifier', '7'], {
    stdin: '{"id":1,"name":null}\n{"id":2,"name":"null"}\n{"id":3,"name":""}\n',
  });
  expect(w.stdout).toContain('committed snapshot 1');
}, 60_000);

describe('messages', () => {
  it('a missing --input file is named as such, not as an unexpected ENOENT', async () => {
    const r = await runTidemark(['write', table, '--input', 'nope.jsonl'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`tidemark write: input file ${join(dir, 'nope.jsonl')} does not exist\n`);
  });

  it('ingest into a mistyped table names the tables nearby', async () => {
    const source = join(dir, 'src.jsonl');
    writeFileSync(source, '{"id":1}\n');
    const r = await runTidemark(['ingest', join(dir, 'wh', 'db.db', 'tt'), '--source', source, '--commit-user', 'u']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`tables in ${join(dir, 'wh', 'db.db')}: t (did you mean t?)`);
  });

  it('--format table prints NULL for a null and quotes the strings "null" and ""', async () => {
    const r = await runTidemark(['read', table, '--format', 'table']);
    expect(lines(r.stdout).sort()).toEqual([' 1 | NULL', ' 2 | "null"', ' 3 | ""', '---+-------', 'id | name'].sort());
  });

  it('tag list prints both times in UTC with Z, whatever the local time zone', async () => {
    const env = { TZ: 'Asia/Kolkata' }; // UTC+05:30: a local time printed as UTC would be 5.5 hours off
    // A creation time is recorded with a retention only, as Java writes tags.
    expect((await runTidemark(['tag', 'create', table, 'v1', '--time-retained', '1d'], { env })).code).toBe(0);
    const r = await runTidemark(['tag', 'list', table], { env });
    const [, , row] = lines(r.stdout);
    const times = row!.split(' | ').slice(2);
    expect(times).toHaveLength(2);
    for (const t of times) expect(t.trim()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const created = Date.parse(times[1]!.trim());
    expect(Math.abs(created - Date.now())).toBeLessThan(10 * 60_000);
    const json = JSON.parse(lines((await runTidemark(['tag', 'list', table, '--json'], { env })).stdout)[0]!) as Record<string, string>;
    expect(json['createTime']).toBe(times[1]!.trim());
  });

  it('the snapshots table fits 100 columns by shortening commit users; --json keeps them whole', async () => {
    const r = await runTidemark(['snapshots', table]);
    const out = lines(r.stdout);
    expect(out[0]).toMatch(/^id \| time +\| kind +\| commitUser +\| +identifier \| records \| delta$/);
    for (const l of out) expect([...l].length).toBeLessThanOrEqual(100);
    expect(out[2]).toContain('ingest-pipeline-eu-west-1');
    expect(out[2]).toContain('…');
    const json = JSON.parse(lines((await runTidemark(['snapshots', table, '--json'])).stdout)[0]!) as Record<string, unknown>;
    expect(json['commitUser']).toBe('ingest-pipeline-eu-west-1-orders-0f3c9a2e-5d1b-4c8e-9f00-123456789abc');
    expect(json['commitIdentifier']).toBe(7);
  });
});
