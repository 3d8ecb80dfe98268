/**
 * The maintenance commands run in-process through `main()` on temporary local tables built with
 * the real write path: summaries must match what actually changed on disk, retained snapshots and
 * tags must read back identically, and bad command lines must exit 2 with the usage.
 */
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, createTag, openTable, type Table } from '@tidemark/core';
import { main, type MainOptions } from '../src/main.js';
import { MemoryStream } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function run(argv: string[], options: MainOptions = {}) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(argv, { stdout, stderr, signal: new AbortController().signal, env: {}, ...options });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

let n = 0;
/** A fresh table `db.t<n>` (columns id INT, p STRING; partitioned by p when asked) in a new warehouse. */
async function newTable(
  opts: { partitioned?: boolean; warehouse?: string } = {},
): Promise<{ warehouse: string; location: string; table: Table }> {
  const warehouse = opts.warehouse ?? (await mkdtemp(join(tmpdir(), 'tidemark-maint-cli-')));
  if (!opts.warehouse) dirs.push(warehouse);
  const catalog = new FileSystemCatalog(warehouse);
  const name = `db.t${++n}`;
  await catalog.createTable(name, {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'p', type: 'STRING' },
    ],
    ...(opts.partitioned ? { partitionKeys: ['p'] } : {}),
  });
  const location = catalog.tableLocation(name);
  await catalog.close();
  return { warehouse, location, table: await openTable(location) };
}

async function append(table: Table, ids: number[], p = 'a'): Promise<void> {
  const r = await table.append(ids.map((id) => ({ id, p })));
  expect(r.status).toBe('committed');
}

async function rows(table: Table, at: { snapshotId?: number; tag?: string } = {}): Promise<string[]> {
  const t = await table.newRead(at).toArrowTable();
  return t
    .toArray()
    .map((r) => JSON.stringify(r.toJSON()))
    .sort();
}

/** Every file under `dir` with its size. */
async function filesUnder(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(p, (await stat(p)).size);
  }
  return out;
}

async function snapshotIdsOf(location: string): Promise<number[]> {
  const names = await readdir(join(location, 'snapshot'));
  return names
    .filter((f) => /^snapshot-\d+$/.test(f))
    .map((f) => Number(f.slice(9)))
    .sort((a, b) => a - b);
}

describe('expire-snapshots', () => {
  it('dry run lists exactly what the real run deletes; --json numbers match the disk; retained snapshots and tags read back identically', async () => {
    const { location, table } = await newTable({ partitioned: true });
    for (let i = 1; i <= 4; i++) await append(table, [i], i % 2 ? 'a' : 'b');
    await createTag(table.fileIO, table.paths, 'keep2', { snapshotId: 2 });
    expect((await table.overwrite([{ id: 10, p: 'a' }])).status).toBe('committed'); // 5: drops files of 1, 3 (3 only in expiring snapshots... and tag keeps 1)
    for (let i = 11; i <= 13; i++) await append(table, [i], 'b'); // 6..8
    const retained = [6, 7, 8];
    const before = new Map<string, string[]>();
    for (const id of retained) before.set(`s${id}`, await rows(table, { snapshotId: id }));
    before.set('tag', await rows(table, { tag: 'keep2' }));
    const filesBefore = await filesUnder(location);

    const dry = await run([
      'expire-snapshots',
      location,
      '--retain-min',
      '3',
      '--older-than',
      '0',
      '--max-deletes',
      '100',
      '--dry-run',
      '--json',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    const drySummary = JSON.parse(dry.stdout) as {
      dryRun: boolean;
      snapshotsExpired: number;
      filesDeleted: number;
      bytesFreed: number;
      files: Array<{ path: string; size: number | null }>;
    };
    expect(drySummary.dryRun).toBe(true);
    expect(await filesUnder(location)).toEqual(filesBefore); // nothing changed
    for (const f of drySummary.files) expect(f.size).toBe(filesBefore.get(f.path));

    const real = await run(['expire-snapshots', location, '--retain-min', '3', '--older-than', '0', '--max-deletes', '100', '--json']);
    expect(real.code, real.stderr).toBe(0);
    const s = JSON.parse(real.stdout) as Record<string, unknown>;
    const filesAfter = await filesUnder(location);
    const vanished = [...filesBefore.keys()].filter((f) => !filesAfter.has(f)).sort();
    expect(s).toMatchObject({
      command: 'expire-snapshots',
      dryRun: false,
      snapshotsExpired: 5,
      earliestSnapshotId: 6,
      filesDeleted: vanished.length,
    });
    expect(typeof s['durationMs']).toBe('number');
    expect(drySummary.files.map((f) => f.path).sort()).toEqual(vanished);
    expect(drySummary.filesDeleted).toBe(vanished.length);
    // bytesFreed counts the sizes the metadata records (data files, manifests, lists): never more than what vanished.
    const vanishedBytes = vanished.reduce((t, f) => t + filesBefore.get(f)!, 0);
    expect(s['bytesFreed']).toBeGreaterThan(0);
    expect(s['bytesFreed'] as number).toBeLessThanOrEqual(vanishedBytes);
    expect(drySummary.bytesFreed).toBe(s['bytesFreed']);
    // Files nothing retained needs went: the data file of snapshot 3 (partition a, dropped by the overwrite).
    expect(vanished.some((f) => f.includes('/p=a/'))).toBe(true);

    expect(await snapshotIdsOf(location)).toEqual(retained);
    const after = await openTable(location);
    for (const id of retained) expect(await rows(after, { snapshotId: id }), `snapshot ${id}`).toEqual(before.get(`s${id}`));
    expect(await rows(after, { tag: 'keep2' })).toEqual(before.get('tag'));
    await after.close();
    await table.close();
  });

  it('text output and nothing to expire', async () => {
    const { location, table } = await newTable();
    await append(table, [1]);
    const r = await run(['expire-snapshots', location]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('expired 0 snapshot(s)');
    expect(r.stdout).toContain('earliest snapshot is now 1');
    await table.close();
  });

  it('Ctrl-C before the run: exit 130 and the table is unchanged', async () => {
    const { location, table } = await newTable();
    for (let i = 0; i < 4; i++) await append(table, [i]);
    const before = await filesUnder(location);
    const ac = new AbortController();
    ac.abort(new Error('interrupted'));
    const r = await run(['expire-snapshots', location, '--retain-min', '1', '--older-than', '0'], { signal: ac.signal });
    expect(r.code).toBe(130);
    expect(await filesUnder(location)).toEqual(before);
    await table.close();
  });

  it('draws progress on a TTY and stays quiet when piped', async () => {
    const { location, table } = await newTable();
    for (let i = 0; i < 4; i++) await append(table, [i]);
    const piped = await run(['expire-snapshots', location, '--retain-min', '3', '--older-than', '0', '--dry-run']);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('');
    const tty = await run(['expire-snapshots', location, '--retain-min', '1', '--older-than', '0'], { stderrIsTTY: true });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tty.stderr).toContain('expiring snapshots');
    expect(tty.stderr).toContain('\r');
    await table.close();
  });
});

describe('remove-orphan-files', () => {
  it('dry run lists a planted orphan with its size; the real run deletes it; the table stays readable', async () => {
    const { location, table } = await newTable();
    await append(table, [1, 2]);
    await append(table, [3]);
    const expected = await rows(table);
    const orphan = join(location, 'bucket-0', 'data-orphan-0.parquet');
    const young = join(location, 'bucket-0', 'data-orphan-young.parquet');
    await writeFile(orphan, Buffer.alloc(1234, 7));
    await writeFile(young, Buffer.alloc(55, 7));
    const old = new Date(Date.now() - 2 * 86_400_000);
    await utimes(orphan, old, old);

    const dry = await run(['remove-orphan-files', location, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`1234\t${orphan}\n`);
    expect(dry.stdout).not.toContain(young);
    expect(dry.stdout).toContain('would delete 1 orphan file(s)');
    expect(dry.stdout).toContain('1234 bytes');
    expect((await stat(orphan)).size).toBe(1234);

    const real = await run(['remove-orphan-files', location, '--json']);
    expect(real.code, real.stderr).toBe(0);
    const s = JSON.parse(real.stdout) as Record<string, unknown>;
    expect(s).toMatchObject({ command: 'remove-orphan-files', dryRun: false, filesDeleted: 1, bytesFreed: 1234 });
    expect(s['filesScanned']).toBeGreaterThan(2);
    await expect(stat(orphan)).rejects.toThrow();
    expect((await stat(young)).size).toBe(55);
    const reopened = await openTable(location);
    expect(await rows(reopened)).toEqual(expected);
    await reopened.close();

    // --older-than 0 warns; --grace keeps younger files whatever --older-than says; --grace 0 does not.
    const now0 = await run(['remove-orphan-files', location, '--older-than', '0', '--grace', '1h', '--json']);
    expect(now0.code).toBe(0);
    expect(now0.stderr).toContain('under 1 hour');
    expect(now0.stderr).toContain('grace');
    expect(JSON.parse(now0.stdout)).toMatchObject({ filesDeleted: 0 });
    expect((await stat(young)).size).toBe(55);
    const graceless = await run(['remove-orphan-files', location, '--older-than', '0', '--grace', '0', '--json']);
    expect(graceless.code, graceless.stderr).toBe(0);
    expect(JSON.parse(graceless.stdout)).toMatchObject({ filesDeleted: 1, bytesFreed: 55 });
    await expect(stat(young)).rejects.toThrow();
    const again = await openTable(location);
    expect(await rows(again)).toEqual(expected);
    await again.close();
    await table.close();
  });
});

describe('compact and compact-manifests', () => {
  it('compact reduces the file count and keeps the rows', async () => {
    const { location, table } = await newTable({ partitioned: true });
    for (let i = 0; i < 6; i++) await append(table, [i * 10, i * 10 + 1], 'a');
    await append(table, [99], 'b');
    const expected = await rows(table);
    const filesBefore = (await table.newRead().plan()).files().length;

    const dry = await run(['compact', location, '--partition', 'p=a', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as { plan: Array<{ files: string[] }>; filesBefore: number };
    expect(plan.filesBefore).toBe(6);
    expect(plan.plan.flatMap((w) => w.files)).toHaveLength(6);

    const r = await run(['compact', location, '--partition', 'p=a', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { filesBefore: number; filesAfter: number; snapshotId: number; rows: number };
    expect(s.filesBefore).toBe(6);
    expect(s.filesAfter).toBeLessThan(6);
    expect(s.rows).toBe(12);
    const reopened = await openTable(location);
    const plan2 = await reopened.newRead().plan();
    expect(plan2.snapshotId).toBe(s.snapshotId);
    expect(plan2.files().length).toBe(filesBefore - s.filesBefore + s.filesAfter);
    expect(await rows(reopened)).toEqual(expected);

    const m = await run(['compact-manifests', location, '--json']);
    expect(m.code, m.stderr).toBe(0);
    const ms = JSON.parse(m.stdout) as { manifestsBefore: number; manifestsAfter: number; snapshotId: number | null };
    expect(ms.snapshotId).not.toBeNull();
    expect(ms.manifestsAfter).toBeLessThan(ms.manifestsBefore);
    const again = await openTable(location);
    expect(await rows(again)).toEqual(expected);
    await again.close();
    await reopened.close();
    await table.close();
  });
});

describe('compact on primary-key tables', () => {
  it('merges sorted runs (dry run, text, json), refuses --max-files, and maintain compacts them too', async () => {
    const warehouse = await mkdtemp(join(tmpdir(), 'tidemark-maint-cli-pk-'));
    dirs.push(warehouse);
    const catalog = new FileSystemCatalog(warehouse);
    await catalog.createTable('db.pk', {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'write-only': 'true' },
    });
    const location = catalog.tableLocation('db.pk');
    await catalog.close();
    const table = await openTable(location);
    for (let c = 0; c < 4; c++) await table.append([0, 1, 2, 3].map((i) => ({ k: c + i, v: `c${c}` })));
    await table.delete([{ k: 2 }]);
    const expected = await rows(table);
    expect(expected).toHaveLength(6);

    const bad = await run(['compact', location, '--max-files', '3']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('append tables only');

    const dry = await run(['compact', location, '--full', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/bucket-0\t5 file\(s\).*-> level 5/);
    expect(dry.stdout).toContain('dry run: would compact 5 file(s)');

    const r = await run(['compact', location, '--full', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      filesBefore: number;
      filesAfter: number;
      buckets: number;
      filesUpgraded: number;
      snapshotId: number;
    };
    expect(s).toMatchObject({ filesBefore: 5, filesAfter: 1, buckets: 1, filesUpgraded: 0, snapshotId: 6 });
    const reopened = await openTable(location);
    expect(await rows(reopened)).toEqual(expected);
    expect((await reopened.newRead().plan()).files().map((f) => f.level)).toEqual([5]);

    const again = await run(['compact', location, '--full']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe('nothing to compact');

    for (let c = 0; c < 5; c++) await table.append([{ k: 100 + c, v: 'late' }]);
    const m = await run(['maintain', location, '--json']);
    expect(m.code, m.stderr).toBe(0);
    const ms = JSON.parse(m.stdout) as { tables: Array<{ jobs: Record<string, Record<string, unknown>> }> };
    expect(ms.tables[0]!.jobs['compact']).toMatchObject({ buckets: 1 });
    expect(ms.tables[0]!.jobs['compact']!['snapshotId']).not.toBeNull();
    expect(await rows(await openTable(location))).toHaveLength(11);
    await reopened.close();
    await table.close();
  });
});

describe('maintain', () => {
  it('runs every job for each table of a warehouse; one failing table does not stop the others (exit 1)', async () => {
    const a = await newTable();
    const b = await newTable({ warehouse: a.warehouse });
    for (let i = 0; i < 6; i++) await append(a.table, [i]);
    for (let i = 0; i < 3; i++) await append(b.table, [i]);
    const expectedA = await rows(a.table);
    const config = join(a.warehouse, 'maintain.json');
    await writeFile(
      config,
      JSON.stringify({ expire: { retainMin: 1, olderThan: '0' }, compact: { full: true }, tables: { [`db.t${n}`]: { expire: false } } }),
    );

    const ok = await run(['maintain', '--warehouse', a.warehouse, '--config', config, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const s = JSON.parse(ok.stdout) as {
      tables: Array<{ table: string; ok: boolean; jobs: Record<string, Record<string, unknown>> }>;
      tablesFailed: number;
    };
    expect(s.tablesFailed).toBe(0);
    expect(s.tables.map((t) => t.table).sort()).toEqual([a.location, b.location].sort());
    const ta = s.tables.find((t) => t.table === a.location)!;
    expect(ta.jobs['compact']).toMatchObject({ filesBefore: 6 });
    expect(ta.jobs['expire']).toMatchObject({ earliestSnapshotId: 7 });
    expect(ta.jobs['orphans']).toMatchObject({ filesDeleted: 0 });
    const tb = s.tables.find((t) => t.table === b.location)!;
    expect(tb.jobs['expire']).toBeUndefined(); // disabled for this table by the config
    expect(await snapshotIdsOf(b.location)).toEqual([1, 2, 3, 4]); // compaction added 4, nothing expired
    expect(await snapshotIdsOf(a.location)).toEqual([7]);
    const ra = await openTable(a.location);
    expect(await rows(ra)).toEqual(expectedA);
    await ra.close();

    const missing = join(a.warehouse, 'db.db', 'nope');
    const mixed = await run(['maintain', missing, a.location]);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain(missing);
    expect(mixed.stdout).toContain(`${a.location}: expire:`);
    expect(mixed.stdout).toContain('1 failed');
    await a.table.close();
    await b.table.close();
  });
});

describe('bad usage exits 2 with the usage', () => {
  const cases: Array<[string, string[], string]> = [
    ['retain-min 0', ['expire-snapshots', 't', '--retain-min', '0'], 'at least 1'],
    ['retain-min > retain-max', ['expire-snapshots', 't', '--retain-min', '5', '--retain-max', '2'], 'cannot exceed'],
    ['bad --older-than', ['expire-snapshots', 't', '--older-than', 'yesterday'], '--older-than'],
    ['orphans in the future', ['remove-orphan-files', 't', '--older-than', '2999-01-01T00:00:00Z'], 'future'],
    ['bad --grace', ['remove-orphan-files', 't', '--grace', 'soon'], '--grace'],
    ['compact --partition without =', ['compact', 't', '--partition', 'dt'], 'key=value'],
    ['compact --where twice', ['compact', 't', '--where', "p = 'a'", '--where', "p = 'b'"], 'more than once'],
    ['compact --max-files 0', ['compact', 't', '--max-files', '0'], 'at least 1'],
    ['maintain without tables', ['maintain'], '--warehouse'],
    ['maintain with both', ['maintain', 't', '--warehouse', 'w'], '--warehouse'],
    ['unknown option', ['compact-manifests', 't', '--full'], "unknown option '--full'"],
  ];
  for (const [title, argv, message] of cases) {
    it(title, async () => {
      const r = await run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain(`Usage: tidemark ${argv[0]}`);
      expect(r.stdout).toBe('');
    });
  }
  it('maintain --config with an unknown key or a bad value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-maint-cfg-'));
    dirs.push(dir);
    const bad1 = join(dir, 'a.json');
    const bad2 = join(dir, 'b.json');
    await writeFile(bad1, JSON.stringify({ expire: { retainMinimum: 3 } }));
    await writeFile(bad2, JSON.stringify({ tables: { 'db.t': { orphans: { olderThan: '2999-01-01' } } } }));
    for (const [file, message] of [
      [bad1, "unknown key 'retainMinimum'"],
      [bad2, 'future'],
    ] as const) {
      const r = await run(['maintain', 't', '--config', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('Usage: tidemark maintain');
    }
  });
});
