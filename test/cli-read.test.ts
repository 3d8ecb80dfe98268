/**
 * The `tidemark` CLI end to end (in-process `main()`, the same code the binary runs): reading the
 * Java-written fixtures, and create + write + read round trips on a temporary local warehouse.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, type PkMorRow } from './support/fixture-rows.js';
import { runMain, type MainResult } from './support/cli-main.js';
import { columns } from './support/table-definitions.mjs';

const run = (argv: string[], options: { stdin?: string; cwd?: string } = {}): Promise<MainResult> =>
  runMain(argv, { stdin: options.stdin ?? '', ...(options.cwd ? { cwd: options.cwd } : {}) });

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
const sorted = (text: string): string[] => lines(text).sort();

const fixtures = join(__dirname, '../../shared/fixtures/paimon');
const pkMor = join(fixtures, 'pk-mor/default.db/pk_table_scan_and_read_mor');
const haveFixtures = existsSync(pkMor);
if (!haveFixtures) console.warn(`[cli-read.test] SKIPPED fixture tests: ${fixtures} not found`);

/** Rows of the fixture README as jsonl lines (keys f0..f3 in schema order). */
const moreRows = (rows: PkMorRow[]): string[] => rows.map(([f0, f1, f2, f3]) => JSON.stringify({ f0, f1, f2, f3 })).sort();

describe.skipIf(!haveFixtures)('tidemark on the Java-written fixtures', () => {
  it('read --format jsonl prints the latest pk-mor rows exactly', async () => {
    const r = await run(['read', pkMor, '--format', 'jsonl']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(sorted(r.stdout)).toEqual(moreRows(PK_MOR_LATEST));
  });

  it('read --snapshot 2 time-travels', async () => {
    const r = await run(['read', pkMor, '--snapshot', '2']);
    expect(r.code).toBe(0);
    expect(sorted(r.stdout)).toEqual(moreRows(PK_MOR_SNAPSHOT_2));
  });

  it('read --columns/--where/--limit project, filter and limit', async () => {
    const r = await run(['read', pkMor, '--columns', 'f3,f0', '--where', 'f1 = 20']);
    expect(sorted(r.stdout)).toEqual(['{"f3":14.1,"f0":"Lucy"}', '{"f3":18.1,"f0":"Paul"}']);
    const limited = await run(['read', pkMor, '--limit', '3']);
    expect(lines(limited.stdout)).toHaveLength(3);
  });

  it('an unknown tag or snapshot fails with exit 1 and one line, no stack', async () => {
    const r = await run(['read', pkMor, '--tag', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual(["tidemark read: tag 'nope' does not exist; the table has no tags"]);
    const s = await run(['read', pkMor, '--snapshot', '7']);
    expect(s.code).toBe(1);
    expect(lines(s.stderr)).toEqual(['tidemark read: snapshot 7 does not exist; earliest is 1, latest is 5']);
  });

  it('snapshots --json lists id, kind, commit user/identifier and record counts', async () => {
    const r = await run(['snapshots', pkMor, '--json']);
    expect(r.code).toBe(0);
    const rows = lines(r.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((s) => [s['id'], s['kind'], s['totalRecordCount'], s['deltaRecordCount']])).toEqual([
      [1, 'APPEND', 9, 9],
      [2, 'APPEND', 11, 2],
      [3, 'COMPACT', 10, -1],
      [4, 'APPEND', 13, 3],
      [5, 'APPEND', 16, 3],
    ]);
    for (const s of rows) {
      expect(typeof s['commitUser']).toBe('string');
      expect(new Date(s['time'] as string).getTime()).toBe(s['timeMillis']);
    }
  });

  it('schema prints columns with ids, types and keys; --json the stored schema', async () => {
    const r = await run(['schema', pkMor]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 0 \| f0 +\| STRING NOT NULL +\| primary key +\|?$/m);
    expect(r.stdout).toMatch(/^ 1 \| f1 +\| INT NOT NULL +\| primary key, partition/m);
    expect(r.stdout).toContain('partition keys: f1');
    expect(r.stdout).toContain('  bucket = 2');
    const j = await run(['schema', pkMor, '--json']);
    const schema = JSON.parse(j.stdout) as { fields: { id: number; name: string }[]; primaryKeys: string[] };
    expect(schema.fields.map((f) => f.name)).toEqual(['f0', 'f1', 'f2', 'f3']);
    expect(schema.primaryKeys).toEqual(['f0', 'f1', 'f2']);
  });

  it('files lists live files of the latest and of an older snapshot', async () => {
    const latest = lines((await run(['files', pkMor, '--json'])).stdout).map(
      (l) => JSON.parse(l) as { rowCount: number; bucket: number; partition: Record<string, string> },
    );
    expect(latest.reduce((n, f) => n + f.rowCount, 0)).toBe(16);
    expect(new Set(latest.map((f) => f.partition['f1']))).toEqual(new Set(['10', '20']));
    const first = lines((await run(['files', pkMor, '--snapshot', '1', '--json'])).stdout).map(
      (l) => JSON.parse(l) as { rowCount: number },
    );
    expect(first.reduce((n, f) => n + f.rowCount, 0)).toBe(9);
    const text = await run(['files', pkMor]);
    expect(text.stdout).toContain('in snapshot 5');
  });
});

describe('tidemark create / write / read on a local warehouse', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tidemark-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const allTypes = columns(
    'id BIGINT NOT NULL',
    'b BOOLEAN',
    'ti TINYINT',
    'si SMALLINT',
    'i INT',
    'f FLOAT',
    'd DOUBLE',
    'dec DECIMAL(38, 10)',
    'dec2 DECIMAL(5, 2)',
    's STRING',
    'c CHAR(3)',
    'vb VARBINARY(8)',
    'bin BYTES',
    'dt DATE',
    'tm TIME(3)',
    'ts0 TIMESTAMP(0)',
    'ts3 TIMESTAMP(3)',
    'ts6 TIMESTAMP(6)',
    'ts9 TIMESTAMP(9)',
    'ltz TIMESTAMP_LTZ(3)',
    'arr ARRAY<STRING>',
    'm MAP<STRING, BIGINT>',
    'mi MAP<INT, DOUBLE>',
    'r ROW<x INT, y ARRAY<DECIMAL(4, 1)>>',
    'p STRING',
  );
  // Written exactly in the format `read --format jsonl` prints, so output must equal input.
  const input = [
    '{"id":"9223372036854775807","b":true,"ti":-128,"si":32767,"i":-2147483648,"f":0.1,"d":1.7976931348623157e+308,"dec":"-1234567890123456789012345678.0123456789","dec2":"999.99","s":"héllo \\"q\\"\\n,","c":"abc","vb":"AAEC/w==","bin":"","dt":"1969-12-31","tm":"23:59:59.999","ts0":"1900-01-01T00:00:00","ts3":"1969-12-31T23:59:59.999","ts6":"2024-02-29T12:34:56.123456","ts9":"1677-09-21T00:12:43.145224192","ltz":"2024-05-01T10:00:00.001Z","arr":["a",null,""],"m":{"2":1,"10":"-9223372036854775808"},"mi":[[2,1.5],[-1,null]],"r":{"x":1,"y":["-99.9",null]},"p":"a"}',
    '{"id":-9007199254740991,"b":false,"ti":127,"si":-32768,"i":2147483647,"f":"NaN","d":"-Infinity","dec":"0.0000000000","dec2":"-0.01","s":"","c":"x  ","vb":"/w==","bin":"3q2+7w==","dt":"+10000-01-01","tm":"00:00:00.000","ts0":"9999-12-31T23:59:59","ts3":"1970-01-01T00:00:00.000","ts6":"1969-12-31T23:59:59.999999","ts9":"2262-04-11T23:47:16.854775807","ltz":"1960-01-01T00:00:00.000Z","arr":[],"m":{},"mi":[],"r":{"x":null,"y":[]},"p":"b"}',
    '{"id":0,"b":null,"ti":null,"si":null,"i":null,"f":null,"d":null,"dec":null,"dec2":null,"s":null,"c":null,"vb":null,"bin":null,"dt":null,"tm":null,"ts0":null,"ts3":null,"ts6":null,"ts9":null,"ltz":null,"arr":null,"m":null,"mi":null,"r":null,"p":null}',
  ];

  it('round-trips every type through create, write (jsonl) and read', async () => {
    writeFileSync(join(dir, 'schema.json'), JSON.stringify(allTypes));
    const created = await run(
      ['create', 'wh/db.db/all', '--schema', '@schema.json', '--partition', 'p', '--option', 'file.compression=zstd'],
      { cwd: dir },
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const w = await run(['write', 'wh/db.db/all'], { cwd: dir, stdin: input.join('\n') + '\n' });
    expect(w.stderr).toBe('');
    expect(w.stdout).toBe('committed snapshot 1 (3 rows)\n');
    const r = await run(['read', join(dir, 'wh/db.db/all')]);
    expect(r.stderr).toBe('');
    expect(sorted(r.stdout)).toEqual([...input].sort());
  });

  it('round-trips through csv in both directions', async () => {
    const csv = await run(['read', join(dir, 'wh/db.db/all'), '--format', 'csv']);
    expect(csv.code).toBe(0);
    writeFileSync(join(dir, 'all.csv'), csv.stdout);
    expect((await run(['create', 'wh/db.db/copy', '--schema', 'schema.json', '--partition', 'p'], { cwd: dir })).code).toBe(0);
    const w = await run(['write', 'wh/db.db/copy', '--input', 'all.csv', '--format', 'csv'], { cwd: dir });
    expect(w.stderr).toBe('');
    expect(w.stdout).toBe('committed snapshot 1 (3 rows)\n');
    const r = await run(['read', 'wh/db.db/copy'], { cwd: dir });
    expect(sorted(r.stdout)).toEqual([...input].sort());
  });

  it('skips a (commit user, identifier) that was already committed', async () => {
    expect((await run(['create', 'wh/db.db/idem', '--schema', '[{"name":"id","type":"INT"}]'], { cwd: dir })).code).toBe(0);
    // One write of commit user job-1 with commit identifier `identifier`.
    const writeAsJob1 = (identifier: number, stdin: string) =>
      run(['write', 'wh/db.db/idem', '--commit-user', 'job-1', '--commit-identifier', String(identifier)], { cwd: dir, stdin });
    const first = await writeAsJob1(7, '{"id":1}\n');
    expect(first.stdout).toBe('committed snapshot 1 (1 row)\n');
    const again = await writeAsJob1(7, '{"id":2}\n');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("skipped: commit identifier 7 of commit user 'job-1' was already committed\n");
    const older = await writeAsJob1(3, '{"id":3}\n');
    expect(older.stdout).toContain('skipped');
    const next = await writeAsJob1(8, '{"id":4}\n');
    expect(next.stdout).toBe('committed snapshot 2 (1 row)\n');
    expect(sorted((await run(['read', 'wh/db.db/idem'], { cwd: dir })).stdout)).toEqual(['{"id":1}', '{"id":4}']);
    const snaps = lines((await run(['snapshots', 'wh/db.db/idem', '--json'], { cwd: dir })).stdout).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    );
    expect(snaps.map((s) => [s['commitUser'], s['commitIdentifier']])).toEqual([
      ['job-1', 7],
      ['job-1', 8],
    ]);
  });

  it('overwrite, tags, time travel by tag and rollback', async () => {
    const t = 'wh/db.db/tags';
    const o = { cwd: dir };
    expect(
      (await run(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"p","type":"STRING"}]', '--partition', 'p'], o)).code,
    ).toBe(0);
    await run(['write', t], { ...o, stdin: '{"id":1,"p":"a"}\n{"id":2,"p":"b"}\n' });
    expect((await run(['tag', 'create', t, 'v1'], o)).stdout).toBe("created tag 'v1' on snapshot 1\n");
    const ow = await run(['write', t, '--overwrite', '--partition', 'p=a'], { ...o, stdin: '{"id":3,"p":"a"}\n' });
    expect(ow.stdout).toBe('committed snapshot 2 (1 row, overwrite)\n');
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":2,"p":"b"}', '{"id":3,"p":"a"}']);
    expect(sorted((await run(['read', t, '--tag', 'v1'], o)).stdout)).toEqual(['{"id":1,"p":"a"}', '{"id":2,"p":"b"}']);
    const list = lines((await run(['tag', 'list', t, '--json'], o)).stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(list.map((x) => [x['name'], x['snapshotId']])).toEqual([['v1', 1]]);
    const rb = await run(['rollback', t, '--to', 'v1'], o);
    expect(rb.code).toBe(0);
    expect(rb.stdout).toContain('rolled back to snapshot 1: removed snapshot 2');
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":1,"p":"a"}', '{"id":2,"p":"b"}']);
    expect((await run(['tag', 'delete', t, 'v1'], o)).code).toBe(0);
    const gone = await run(['read', t, '--tag', 'v1'], o);
    expect(gone.code).toBe(1);
    expect(lines(gone.stderr)).toHaveLength(1);
  });

  it('rollback --dry-run says what would go and changes nothing; create, tag and rollback --json print one object', async () => {
    const t = 'wh/db.db/dryrollback';
    const o = { cwd: dir };
    const created = await run(['create', t, '--schema', '[{"name":"id","type":"INT NOT NULL"}]', '--primary-key', 'id', '--json'], o);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      command: 'create',
      table: join(dir, t),
      schemaId: 0,
      fields: [{ name: 'id', type: 'INT NOT NULL' }],
      partitionKeys: [],
      primaryKeys: ['id'],
    });
    for (const id of [1, 2, 3]) expect((await run(['write', t], { ...o, stdin: `{"id":${id}}\n` })).code).toBe(0);
    const tag = await run(['tag', 'create', t, 'late', '--json'], o);
    expect(JSON.parse(tag.stdout)).toMatchObject({ command: 'tag', action: 'create', name: 'late', snapshotId: 3 });
    const snapshotsBefore = (await run(['snapshots', t, '--json'], o)).stdout;

    const dry = await run(['rollback', t, '--to', '1', '--force', '--dry-run'], o);
    expect(dry.code).toBe(0);
    expect(lines(dry.stdout)).toEqual([
      'would roll back to snapshot 1: would remove snapshots 2, 3',
      "  would remove tag(s) 'late'",
      expect.stringMatching(/^ {2}would delete 2 data file\(s\) and \d+ manifest file\(s\)$/),
    ]);
    const dryJson = JSON.parse((await run(['rollback', t, '--to', '1', '--force', '--dry-run', '--json'], o)).stdout) as Record<
      string,
      unknown
    >;
    expect((await run(['snapshots', t, '--json'], o)).stdout).toBe(snapshotsBefore);
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":1}', '{"id":2}', '{"id":3}']);
    expect(lines((await run(['tag', 'list', t, '--json'], o)).stdout)).toHaveLength(1);

    const real = await run(['rollback', t, '--to', '1', '--force', '--json'], o);
    expect(real.code).toBe(0);
    const done = JSON.parse(real.stdout) as Record<string, unknown>;
    expect(done).toMatchObject({
      command: 'rollback',
      snapshotId: 1,
      removedSnapshots: [3, 2],
      removedTags: ['late'],
      deletedDataFiles: 2,
      dryRun: false,
    });
    expect(dryJson).toEqual({ ...done, dryRun: true });
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":1}']);
    expect(lines((await run(['tag', 'list', t, '--json'], o)).stdout)).toEqual([]);
    expect((await run(['tag', 'create', t, 'first'], o)).code).toBe(0);
    const deleted = await run(['tag', 'delete', t, 'first', '--json'], o);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ command: 'tag', action: 'delete', name: 'first' });
    expect(lines((await run(['tag', 'list', t, '--json'], o)).stdout)).toEqual([]);
  });

  it('write --json prints one object: committed with the snapshot id, skipped with the reason, empty', async () => {
    const t = 'wh/db.db/writejson';
    const o = { cwd: dir };
    expect((await run(['create', t, '--schema', '[{"name":"id","type":"INT"}]'], o)).code).toBe(0);
    const job = ['--commit-user', 'job', '--commit-identifier', '5', '--json'];
    const first = await run(['write', t, ...job], { ...o, stdin: '{"id":1}\n{"id":2}\n' });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      command: 'write',
      table: join(dir, t),
      status: 'committed',
      rows: 2,
      overwrite: false,
      snapshotId: 1,
    });
    const again = await run(['write', t, ...job], { ...o, stdin: '{"id":3}\n' });
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'skipped', rows: 0, reason: expect.stringContaining("commit user 'job'") });
    const empty = await run(['write', t, '--json'], { ...o, stdin: '' });
    expect(JSON.parse(empty.stdout)).toEqual({ command: 'write', table: join(dir, t), status: 'empty', rows: 0, overwrite: false });
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":1}', '{"id":2}']);
  });

  it('alter add-column: new writes carry the column, old rows read it as null', async () => {
    const t = 'wh/db.db/evolve';
    const o = { cwd: dir };
    await run(['create', t, '--schema', '[{"name":"id","type":"INT"}]'], o);
    await run(['write', t], { ...o, stdin: '{"id":1}\n' });
    const a = await run(['alter', t, 'add-column', 'v', 'DECIMAL(10,', '2)', '--json'], o);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual({
      command: 'alter',
      table: join(dir, t),
      action: 'add-column',
      schemaId: 1,
      fields: columns('id INT', 'v DECIMAL(10, 2)'),
    });
    const w = await run(['write', t], { ...o, stdin: '{"id":2,"v":"3.50"}\n' });
    expect(w.stderr).toBe('');
    expect(sorted((await run(['read', t], o)).stdout)).toEqual(['{"id":1,"v":null}', '{"id":2,"v":"3.50"}']);
  });

  it('rejects bad input with exit 1 naming the line and column, writing no snapshot', async () => {
    const t = 'wh/db.db/idem';
    const r = await run(['write', t], { cwd: dir, stdin: '{"id":1}\n{"id":"x"}\n' });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([`tidemark write: input line 2, column 'id': expected INT, got "x"`]);
    const bad = await run(['write', t], { cwd: dir, stdin: '{"id":1\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('input line 1');
    expect(lines((await run(['snapshots', t, '--json'], { cwd: dir })).stdout)).toHaveLength(2);
  });

  it.each([
    [['read'], 'missing argument <table>'],
    [['read', 't', '--snapshot', '1', '--tag', 'x'], 'cannot be used together'],
    [['read', 't', '--timestamp', 'yesterday'], "option '--timestamp'"],
    [['write', 't', '--commit-user', 'u'], "requires '--commit-identifier'"],
    [['create', 't', '--schema', '{oops'], "option '--schema'"],
    [['alter', 't', 'add-column', 'c'], "'alter add-column' needs"],
    [['rollback', 't'], "option '--to' is required"],
  ])('bad usage %j exits 2', async (argv, message) => {
    const r = await run(argv, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });
});
