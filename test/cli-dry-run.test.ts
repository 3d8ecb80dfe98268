/**
 * `--dry-run` of `delete`, `update` and `write --overwrite`, through `main()` on local disk and on
 * the real S3 server: a dry run leaves every object of the table byte for byte as it was (and the
 * latest snapshot with it), its `--json` figures are what the real run then reports, and they
 * match what the real run actually changed (rows gone, deletion vectors on exactly the data files
 * named, partitions replaced with the files and rows counted). A bad `--where` names the column
 * and changes nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { runMain, useCliS3Env } from './support/cli-main.js';

useCliS3Env();

/** Every object under the table, `path → size:sha256`: the table as it is on the store. */
async function objects(io: FileIO, location: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const st of io.list(location)) {
    const hash = createHash('sha256')
      .update(await io.read(st.path))
      .digest('hex');
    out.set(st.path, `${st.size}:${hash}`);
  }
  return out;
}

/** Runs `tidemark <argv>`, expecting exit 0, and parses its one `--json` line. */
async function json(argv: string[], stdin?: string): Promise<Record<string, unknown>> {
  const r = await runMain(argv, stdin !== undefined ? { stdin } : {});
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** The figures a dry run and the real run share. */
const PLAN_KEYS = ['baseSnapshotId', 'rowsMatched', 'method', 'partitions', 'deletionVectorFiles'] as const;
const planOf = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(PLAN_KEYS.map((k) => [k, o[k]]));

/** Rows of the latest snapshot as `id:dt:v`, sorted. */
async function contents(location: string, io: FileIO): Promise<string[]> {
  const t = await openTable(location, { fileIO: io });
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => {
      const o = r.toJSON() as { id: number; dt: string; v: string };
      return `${o.id}:${o.dt}:${o.v}`;
    })
    .sort();
}

/** Live data files per partition directory (`dt=x`), from a plan of the latest snapshot. */
async function liveFiles(table: Table): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const split of (await table.newRead().plan()).splits) {
    const dir = table.paths.partitionPath(split.partition).replace(/\/$/, '');
    const set = out.get(dir) ?? new Set<string>();
    for (const f of split.files) set.add(f.meta.fileName);
    out.set(dir, set);
  }
  return out;
}

const jsonl = (rows: readonly object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const FIELDS = [
  { name: 'id', type: 'INT NOT NULL' },
  { name: 'dt', type: 'STRING NOT NULL' },
  { name: 'v', type: 'STRING' },
];
const FIRST = [
  { id: 1, dt: 'x', v: 'a' },
  { id: 2, dt: 'x', v: 'b' },
  { id: 3, dt: 'y', v: 'c' },
];
const SECOND = [
  { id: 4, dt: 'y', v: 'd' },
  { id: 5, dt: 'z', v: 'e' },
];

describe.each(storageBackends('cli dry run'))('$name', (backend) => {
  let wh: BackendWarehouse;
  let catalog: FileSystemCatalog;
  beforeAll(async () => {
    if (!backend.available) return;
    wh = await backend.open();
    catalog = new FileSystemCatalog(wh.root, { fileIO: wh.io });
  }, 60_000);
  afterAll(async () => {
    if (backend.available) await wh.cleanup();
  }, 120_000);

  /** A table of FIELDS partitioned by dt, with FIRST and SECOND committed through the CLI (snapshots 1 and 2). */
  async function table(name: string, options: { primaryKey?: boolean }): Promise<string> {
    await catalog.createTable(`db.${name}`, {
      fields: FIELDS,
      partitionKeys: ['dt'],
      ...(options.primaryKey
        ? { primaryKeys: ['id', 'dt'], options: { bucket: '2' } }
        : { options: { 'deletion-vectors.enabled': 'true' } }),
    });
    const location = catalog.tableLocation(`db.${name}`);
    for (const rows of [FIRST, SECOND]) expect((await runMain(['write', location], { stdin: jsonl(rows) })).code).toBe(0);
    return location;
  }

  /**
   * Runs `argv` with --dry-run and checks the table did not change at all; then for real, and
   * checks that the real run reports the dry run's figures. Returns both outputs.
   */
  async function dryThenReal(
    location: string,
    argv: string[],
    stdin?: string,
  ): Promise<{ dry: Record<string, unknown>; real: Record<string, unknown> }> {
    const before = await objects(wh.io, location);
    const dry = await json([...argv, '--dry-run', '--json'], stdin);
    expect(await objects(wh.io, location)).toEqual(before);
    expect(dry).toMatchObject({ dryRun: true, status: 'dry-run' });
    const real = await json([...argv, '--json'], stdin);
    expect(real).toMatchObject({ dryRun: false, status: 'committed', snapshotId: (dry['baseSnapshotId'] as number) + 1 });
    return { dry, real };
  }

  describe.skipIf(!backend.available)('append table with deletion vectors', () => {
    it('delete --dry-run changes no byte; its figures are those of the real delete, which marks exactly those rows and files', async () => {
      const location = await table('dv_delete', {});
      const t = await openTable(location, { fileIO: wh.io });
      const files = await liveFiles(t);
      const { dry, real } = await dryThenReal(location, ['delete', location, '--where', 'id >= 2 AND id <= 4']);
      expect(dry).toMatchObject({
        command: 'delete',
        table: location,
        deleted: 0,
        baseSnapshotId: 2,
        rowsMatched: 3,
        method: 'deletion-vectors',
      });
      expect(dry['partitions']).toEqual([
        { partition: { dt: 'x' }, rows: 1 },
        { partition: { dt: 'y' }, rows: 2 },
      ]);
      const dvFiles = dry['deletionVectorFiles'] as Array<{ partition: { dt: string }; bucket: number; file: string; rows: number }>;
      expect(dvFiles.map((f) => f.rows)).toEqual([1, 1, 1]);
      for (const f of dvFiles) expect(files.get(`dt=${f.partition.dt}`)?.has(f.file)).toBe(true);
      expect(planOf(real)).toEqual(planOf(dry));
      expect(real['deleted']).toBe(3);

      expect(await contents(location, wh.io)).toEqual(['1:x:a', '5:z:e']);
      // The real run put deletion vectors on exactly the files the dry run named; no data file changed.
      const after = await openTable(location, { fileIO: wh.io });
      const withDv = (await after.newRead().plan()).splits.flatMap((s) => [...s.deletionFiles.keys()]).sort();
      expect(withDv).toEqual(dvFiles.map((f) => f.file).sort());
      expect(await liveFiles(after)).toEqual(files);
    });

    it('update --dry-run changes no byte; the real update reports and changes the same rows', async () => {
      const location = await table('dv_update', {});
      const { dry, real } = await dryThenReal(location, ['update', location, '--where', "dt = 'y'", '--set', '{"v": "new"}']);
      expect(dry).toMatchObject({ command: 'update', updated: 0, rowsMatched: 2, method: 'deletion-vectors' });
      expect(dry['partitions']).toEqual([{ partition: { dt: 'y' }, rows: 2 }]);
      expect(planOf(real)).toEqual(planOf(dry));
      expect(real['updated']).toBe(2);
      expect(await contents(location, wh.io)).toEqual(['1:x:a', '2:x:b', '3:y:new', '4:y:new', '5:z:e']);
    });

    it('a --where naming an unknown column fails with the column named and changes nothing, dry or not', async () => {
      const location = await table('dv_bad', {});
      const before = await objects(wh.io, location);
      for (const argv of [
        ['delete', location, '--where', 'nope = 1', '--dry-run'],
        ['delete', location, '--where', 'nope = 1'],
        ['update', location, '--where', 'nope = 1', '--set', '{"v": "x"}', '--dry-run', '--json'],
      ]) {
        const r = await runMain(argv);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^tidemark (delete|update): unknown column 'nope' .*columns are: id, dt, v\n$/);
      }
      expect(await objects(wh.io, location)).toEqual(before);
    });
  });

  describe.skipIf(!backend.available)('primary-key table', () => {
    it('delete --where and --input, and update: dry runs change no byte and report what the real runs then do', async () => {
      const location = await table('pk', { primaryKey: true });
      const byWhere = await dryThenReal(location, ['delete', location, '--where', "v = 'b' OR v = 'd'"]);
      expect(byWhere.dry).toMatchObject({ rowsMatched: 2, method: 'primary-key-records', deletionVectorFiles: [] });
      expect(byWhere.dry['partitions']).toEqual([
        { partition: { dt: 'x' }, rows: 1 },
        { partition: { dt: 'y' }, rows: 1 },
      ]);
      expect(planOf(byWhere.real)).toEqual(planOf(byWhere.dry));
      expect(byWhere.real['deleted']).toBe(2);
      expect(await contents(location, wh.io)).toEqual(['1:x:a', '3:y:c', '5:z:e']);

      // Keys that do not exist (id 2 is gone, id 9 never was) are not counted.
      const keys = jsonl([
        { id: 2, dt: 'x' },
        { id: 5, dt: 'z' },
        { id: 9, dt: 'z' },
      ]);
      const byKey = await dryThenReal(location, ['delete', location, '--input', '-'], keys);
      expect(byKey.dry).toMatchObject({ baseSnapshotId: 3, rowsMatched: 1, partitions: [{ partition: { dt: 'z' }, rows: 1 }] });
      expect(planOf(byKey.real)).toEqual(planOf(byKey.dry));
      expect(await contents(location, wh.io)).toEqual(['1:x:a', '3:y:c']);

      const upd = await dryThenReal(location, ['update', location, '--where', 'id < 10', '--set', '{"v": "u"}']);
      expect(upd.dry).toMatchObject({ rowsMatched: 2 });
      expect(planOf(upd.real)).toEqual(planOf(upd.dry));
      expect(await contents(location, wh.io)).toEqual(['1:x:u', '3:y:u']);
    });

    it('a dry run with an identifier already committed says the real run would skip', async () => {
      const location = await table('pk_skip', { primaryKey: true });
      const args = ['delete', location, '--where', 'id = 1', '--commit-user', 'job', '--commit-identifier', '7'];
      expect((await json([...args, '--json'])).status).toBe('committed');
      const before = await objects(wh.io, location);
      const dry = await json([...args, '--dry-run', '--json']);
      expect(dry).toMatchObject({
        dryRun: true,
        status: 'skipped',
        reason: expect.stringContaining("commit identifier 7 of commit user 'job'"),
      });
      const text = await runMain([...args, '--dry-run']);
      expect(text.stdout).toMatch(/^dry run: would skip: commit identifier 7/);
      expect(await objects(wh.io, location)).toEqual(before);
    });
  });

  describe.skipIf(!backend.available)('write --overwrite --dry-run', () => {
    it('dynamic: names the partitions the input lands in with their current files and rows, and the real overwrite replaces exactly those', async () => {
      const location = await table('ow_dynamic', {});
      const t = await openTable(location, { fileIO: wh.io });
      const files = await liveFiles(t);
      const input = jsonl([
        { id: 10, dt: 'y', v: 'n' },
        { id: 11, dt: 'y', v: 'n' },
        { id: 12, dt: 'w', v: 'n' },
      ]);
      const before = await objects(wh.io, location);
      const dry = await json(['write', location, '--overwrite', '--dry-run', '--json'], input);
      expect(await objects(wh.io, location)).toEqual(before);
      expect(dry).toEqual({
        command: 'write',
        table: location,
        dryRun: true,
        status: 'dry-run',
        rows: 3,
        overwrite: true,
        baseSnapshotId: 2,
        mode: 'dynamic',
        partitions: [
          { partition: { dt: 'w' }, currentFiles: 0, currentRows: 0, rowsWritten: 1 },
          { partition: { dt: 'y' }, currentFiles: files.get('dt=y')!.size, currentRows: 2, rowsWritten: 2 },
        ],
        filesReplaced: files.get('dt=y')!.size,
        rowsReplaced: 2,
        rowsWritten: 3,
      });
      const text = await runMain(['write', location, '--overwrite', '--dry-run'], { stdin: input });
      expect(text.stdout.split('\n')[0]).toBe(
        `dry run: would overwrite 1 partition with 3 rows, replacing ${files.get('dt=y')!.size} data files holding 2 rows (planned against snapshot 2); nothing was changed`,
      );
      expect(await objects(wh.io, location)).toEqual(before);

      expect(await json(['write', location, '--overwrite', '--json'], input)).toMatchObject({
        status: 'committed',
        snapshotId: 3,
        rows: 3,
      });
      const after = await liveFiles(await openTable(location, { fileIO: wh.io }));
      // Partitions the plan did not name are untouched; the replaced one holds none of its old files.
      expect(after.get('dt=x')).toEqual(files.get('dt=x'));
      expect(after.get('dt=z')).toEqual(files.get('dt=z'));
      for (const f of files.get('dt=y')!) expect(after.get('dt=y')!.has(f)).toBe(false);
      expect(await contents(location, wh.io)).toEqual(['10:y:n', '11:y:n', '12:w:n', '1:x:a', '2:x:b', '5:z:e']);
    });

    it('static --partition: reports the partition, and refuses rows outside it as the real run does, writing nothing', async () => {
      const location = await table('ow_static', {});
      const before = await objects(wh.io, location);
      const dry = await json(
        ['write', location, '--overwrite', '--partition', 'dt=x', '--dry-run', '--json'],
        jsonl([{ id: 7, dt: 'x', v: 'n' }]),
      );
      expect(dry).toMatchObject({ mode: 'static', filesReplaced: 1, rowsReplaced: 2, rowsWritten: 1 });
      expect(dry['partitions']).toEqual([{ partition: { dt: 'x' }, currentFiles: 1, currentRows: 2, rowsWritten: 1 }]);
      const outside = await runMain(['write', location, '--overwrite', '--partition', 'dt=x', '--dry-run'], {
        stdin: jsonl([{ id: 7, dt: 'y', v: 'n' }]),
      });
      expect(outside.code).toBe(1);
      expect(outside.stderr).toContain(`trying to overwrite partition {"dt":"x"}, but the input has rows that belong to partition 'dt=y'`);
      const badSpec = await runMain(['write', location, '--overwrite', '--partition', 'v=x', '--dry-run'], {
        stdin: jsonl([{ id: 7, dt: 'x' }]),
      });
      expect(badSpec.code).toBe(1);
      expect(badSpec.stderr).toContain("overwrite partition spec names 'v', which is not a partition key");
      expect(await objects(wh.io, location)).toEqual(before);
      const real = await runMain(['write', location, '--overwrite', '--partition', 'dt=x'], { stdin: jsonl([{ id: 7, dt: 'x', v: 'n' }]) });
      expect(real.code, real.stderr).toBe(0);
      expect(await contents(location, wh.io)).toEqual(['3:y:c', '4:y:d', '5:z:e', '7:x:n']);
    });
  });
});

describe('--dry-run on the command line', () => {
  it('text output lists 20 partitions and files at most, --json all of them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-dry-run-'));
    try {
      const location = join(dir, 'wh', 'db.db', 't');
      const schema = JSON.stringify(FIELDS);
      const create = ['create', location, '--schema', schema, '--partition', 'dt', '--option', 'deletion-vectors.enabled=true'];
      expect((await runMain(create)).code).toBe(0);
      const rows = Array.from({ length: 25 }, (_, i) => ({ id: i, dt: `p${String(i).padStart(2, '0')}`, v: 'x' }));
      expect((await runMain(['write', location], { stdin: jsonl(rows) })).code).toBe(0);
      const text = await runMain(['delete', location, '--where', "v = 'x'", '--dry-run']);
      expect(text.code, text.stderr).toBe(0);
      const lines = text.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe(
        'dry run: would delete 25 rows, marking them in the deletion vectors of 25 data files (planned against snapshot 1); nothing was changed',
      );
      expect(lines.filter((l) => l.startsWith('  partition '))).toHaveLength(20);
      expect(lines.filter((l) => l.startsWith('  data file '))).toHaveLength(20);
      expect(lines).toContain('  … and 5 partitions more (--json lists them all)');
      expect(lines).toContain('  … and 5 data files more (--json lists them all)');
      const all = await json(['delete', location, '--where', "v = 'x'", '--dry-run', '--json']);
      expect(all['partitions']).toHaveLength(25);
      expect(all['deletionVectorFiles']).toHaveLength(25);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // write --dry-run alone checks an append (test/cli-write-dry-run.test.ts); --partition still needs --overwrite.
  it('write --dry-run --partition needs --overwrite', async () => {
    const r = await runMain(['write', 'wh/db.db/t', '--dry-run', '--partition', 'dt=x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--partition' requires '--overwrite'");
  });
});
