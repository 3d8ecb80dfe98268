/**
 * Compaction of primary-key tables (compactPrimaryKeyTable) on local disk: for each merge engine,
 * random upserts and deletes over many commits, then a universal-compaction run and a full
 * compaction; what a read returns never changes, at the latest snapshot and at every older one
 * (time travel), and the files end up where Paimon puts them (levels, file source, no retractions
 * at the top level). Two compactions racing on the same buckets: one wins, the other gives up
 * cleanly and leaves nothing behind.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { FILE_SOURCE_COMPACT } from '@tidemark/format';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { MaintenanceAbortedError, MaintenanceArgumentError, compactPrimaryKeyTable } from '../src/index.js';
import { TYPED_SPEC, createTable, filesOfAllSnapshots, hookedFileIO, parquetFilesOnDisk } from './compact-helpers.js';
import { commitRecords, createPkTable, levelsOf, rowsAt, type PkRecord } from './pk-helpers.js';
import { seededRandom as random } from '../../../test/support/seeded-random.mjs';

const DT = ['2024-01-01', '2024-01-02'];

interface History {
  readonly seq: Map<string, bigint>;
  readonly written: Set<string>;
  readonly commits: PkRecord[][];
}

const newHistory = (): History => ({ seq: new Map(), written: new Set(), commits: [] });

/**
 * Random commits: upserts of keys 0..39 and (30 %) 100..139, and (with `deletes`) deletes of keys
 * written before.
 */
async function randomCommits(
  table: Table,
  h: History,
  seed: number,
  commits: number,
  opts: { deletes: boolean; nulls: boolean },
): Promise<void> {
  const rnd = random(seed);
  for (let c = 0; c < commits; c++) {
    const batch = new Map<string, PkRecord>();
    const size = 5 + Math.floor(rnd() * 25);
    for (let i = 0; i < size; i++) {
      const k = Math.floor(rnd() * 40) + (rnd() < 0.3 ? 100 : 0);
      const dt = DT[Math.floor(rnd() * DT.length)]!;
      const id = `${dt}|${k}`;
      const del = opts.deletes && h.written.has(id) && rnd() < 0.25;
      const a = opts.nulls && rnd() < 0.2 ? null : BigInt(Math.floor(rnd() * 1000) - 300);
      const s = opts.nulls && rnd() < 0.3 ? null : `v${c}-${i}-${'x'.repeat(Math.floor(rnd() * 20))}`;
      batch.set(id, { k, dt, kind: del ? 3 : h.written.has(id) && rnd() < 0.5 ? 2 : 0, a, s });
      h.written.add(id);
    }
    h.commits.push([...batch.values()]);
    await commitRecords(table, [...batch.values()], h.seq);
  }
}

/** A large top-level base: keys 100..2599 of both partitions, at `level`. */
async function commitBase(table: Table, h: History, level: number): Promise<void> {
  const records: PkRecord[] = [];
  for (const dt of DT) {
    for (let k = 100; k < 2600; k++) {
      records.push({ k, dt, kind: 0, a: BigInt(k), s: `base-${k}-${((k * 7919) % 100_003).toString(36)}` });
      h.written.add(`${dt}|${k}`);
    }
  }
  h.commits.push(records);
  await commitRecords(table, records, h.seq, level);
}

/** Rows a read returns at the first, every third and the latest snapshot, by id. */
async function allSnapshots(table: Table): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const ids = await table.snapshotManager.sortedIds();
  for (const id of ids) if (id === ids[0] || id % 3 === 0 || id === ids[ids.length - 1]) out.set(id, await rowsAt(table, id));
  return out;
}

async function expectUnchanged(table: Table, before: Map<number, string[]>): Promise<void> {
  for (const [id, rows] of before) expect(await rowsAt(table, id), `snapshot ${id}`).toEqual(rows);
}

const ENGINES: [string, Record<string, string>, { deletes: boolean; nulls: boolean }][] = [
  ['deduplicate', {}, { deletes: true, nulls: true }],
  [
    'partial-update',
    { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
    { deletes: true, nulls: true },
  ],
  [
    'aggregation',
    { 'merge-engine': 'aggregation', 'fields.a.aggregate-function': 'sum', 'fields.s.aggregate-function': 'max' },
    { deletes: false, nulls: true },
  ],
];

describe('compactPrimaryKeyTable', () => {
  for (const [engine, options, ops] of ENGINES) {
    it(`${engine}: universal and full compaction never change what any snapshot reads`, async () => {
      // A high amplification limit keeps the first run on the size-ratio rule.
      const table = await createPkTable({ ...options, 'target-file-size': '2 kb', 'compaction.max-size-amplification-percent': '2000' });
      const h = newHistory();
      await commitBase(table, h, 5);
      await randomCommits(table, h, engine.length * 7919, 6, ops);
      const before = await allSnapshots(table);
      const latestBefore = (await table.snapshotManager.latest())!.id;

      // Up to 6 small level-0 runs over a large level-5 run per bucket: size ratio takes the
      // level-0 runs and stops at level 5, so they go to level 4, keeping their retractions.
      const s1 = await compactPrimaryKeyTable(table);
      expect(s1.snapshotId).toBe(latestBefore + 1);
      expect(s1.windows).toBeGreaterThan(0);
      expect((await table.snapshotManager.snapshot(s1.snapshotId!)).commitKind).toBe('COMPACT');
      expect(await rowsAt(table)).toEqual(before.get(latestBefore));
      await expectUnchanged(table, before);
      const mid = await levelsOf(table);
      expect(mid.filter((f) => f.level === 4).length).toBeGreaterThan(0);
      expect(mid.filter((f) => f.level !== 4 && f.level !== 5)).toEqual(mid.filter((f) => f.level === 0));

      await randomCommits(table, h, engine.length * 31, 3, ops);
      for (const [id, rows] of await allSnapshots(table)) if (!before.has(id)) before.set(id, rows);
      const latest = (await table.snapshotManager.latest())!.id;
      const s2 = await compactPrimaryKeyTable(table, { full: true });
      expect(s2.snapshotId).toBe(latest + 1);
      expect(await rowsAt(table)).toEqual(before.get(latest));
      await expectUnchanged(table, before);
      const files = await levelsOf(table);
      expect(files.every((f) => f.level === 5)).toBe(true);
      const plan = await table.newRead().plan();
      for (const split of plan.splits) for (const f of split.files) expect(f.meta.deleteRowCount).toBe(0);

      // Nothing left to do: a second full compaction commits nothing.
      const s3 = await compactPrimaryKeyTable(table, { full: true });
      expect(s3.snapshotId).toBeNull();
      expect((await table.snapshotManager.latest())!.id).toBe(latest + 1);
    });
  }

  it('first-row: compaction makes the first row of each key visible, as the reader skips level 0', async () => {
    const table = await createPkTable({ 'merge-engine': 'first-row', 'ignore-delete': 'true' });
    const h = newHistory();
    await randomCommits(table, h, 42, 7, { deletes: true, nulls: true });
    expect(await rowsAt(table)).toEqual([]); // everything is still in level 0
    const first = new Map<string, PkRecord>();
    for (const commit of h.commits)
      for (const r of commit) if (r.kind !== 3 && !first.has(`${r.dt}|${r.k}`)) first.set(`${r.dt}|${r.k}`, r);
    const model = [...first.values()].map((r) => JSON.stringify([r.k, r.dt, r.a === null ? null : `${r.a}n`, r.s])).sort();
    const s = await compactPrimaryKeyTable(table);
    expect(s.snapshotId).not.toBeNull();
    expect(await rowsAt(table)).toEqual(model);
    expect((await levelsOf(table)).every((f) => f.level > 0)).toBe(true);
  });

  it('a full compaction merges level-0 deletes into the top level and drops them', async () => {
    const table = await createPkTable({ 'num-levels': '4' });
    const seq = new Map<string, bigint>();
    const dt = DT[0]!;
    // A large base file (keys 0..1998 even, bucket 0) at level 3 (the top), then deletes in level 0.
    const base: PkRecord[] = [];
    for (let k = 0; k < 2000; k += 2) base.push({ k, dt, kind: 0, a: BigInt(k), s: `base-${k}` });
    await commitRecords(table, base, seq, 3);
    await commitRecords(table, [{ k: 4, dt, kind: 3, a: null, s: null }], seq);
    await commitRecords(table, [{ k: 5000, dt, kind: 0, a: 1n, s: 'new' }], seq);
    const before = await rowsAt(table);
    const baseName = (await levelsOf(table)).find((f) => f.level === 3)!.name;

    // Key 4's -D lies inside the base file's key range, so they share a section and are merged;
    // the output is the top level, so the retraction itself is dropped.
    const s = await compactPrimaryKeyTable(table, { full: true });
    expect(s.snapshotId).not.toBeNull();
    expect(await rowsAt(table)).toEqual(before);
    expect(before.some((r) => r.startsWith('[4,'))).toBe(false);
    const files = await levelsOf(table);
    expect(files.every((f) => f.level === 3)).toBe(true);
    expect(files.map((f) => f.name)).not.toContain(baseName);
    expect(files.every((f) => f.source === FILE_SOURCE_COMPACT)).toBe(true);
  });

  it('merges a single file that holds several records of one key, and copies one that does not', async () => {
    const table = await createPkTable({});
    const seq = new Map<string, bigint>();
    const dt = DT[0]!;
    // Bucket 0: key 2 three times in one file (sequence order = input order); bucket 1: unique keys.
    await commitRecords(
      table,
      [
        { k: 2, dt, kind: 0, a: 1n, s: 'first' },
        { k: 2, dt, kind: 2, a: 2n, s: 'second' },
        { k: 4, dt, kind: 0, a: 4n, s: 'four' },
        { k: 2, dt, kind: 2, a: 3n, s: 'third' },
        { k: 1, dt, kind: 0, a: 1n, s: 'one' },
        { k: 3, dt, kind: 3, a: 3n, s: 'gone' },
      ],
      seq,
    );
    // A second run in bucket 0 that overlaps nothing: both small files are rewritten together,
    // each key range on its own (a window of one run).
    await commitRecords(
      table,
      [
        { k: 10, dt, kind: 0, a: 10n, s: 'ten' },
        { k: 12, dt, kind: 0, a: 12n, s: 'twelve' },
      ],
      seq,
    );
    const before = await rowsAt(table);
    expect(before.filter((r) => r.startsWith('[2,'))).toEqual(['[2,"2024-01-01","3n","third"]']);
    const s = await compactPrimaryKeyTable(table, { full: true });
    expect(s.snapshotId).not.toBeNull();
    expect(await rowsAt(table)).toEqual(before);
    const plan = await table.newRead().plan();
    // Every key once (2, 4, 10, 12 and 1), and the -D dropped at the top level.
    expect(plan.splits.map((x) => [x.bucket, x.files.reduce((n, f) => n + f.meta.rowCount, 0)]).sort()).toEqual([
      [0, 4],
      [1, 1],
    ]);
  });

  it('moves a large file that overlaps nothing up a level without rewriting it', async () => {
    const table = await createPkTable({ 'num-levels': '4', 'target-file-size': '1 kb' });
    const seq = new Map<string, bigint>();
    const dt = DT[0]!;
    const big: PkRecord[] = [];
    for (let k = 0; k < 600; k += 2) big.push({ k, dt, kind: 0, a: BigInt(k), s: `big-${k}-${'y'.repeat(30)}` });
    await commitRecords(table, big, seq, 1);
    await commitRecords(table, [{ k: 10_000, dt, kind: 0, a: 1n, s: 'far' }], seq);
    const before = await rowsAt(table);
    const bigName = (await levelsOf(table)).find((f) => f.level === 1)!.name;
    const s = await compactPrimaryKeyTable(table, { full: true });
    expect(s.filesUpgraded).toBeGreaterThanOrEqual(1);
    expect(await rowsAt(table)).toEqual(before);
    const files = await levelsOf(table);
    const moved = files.find((f) => f.name === bigName)!;
    expect(moved.level).toBe(3);
    expect(moved.source).toBe(0); // an upgraded file keeps its source
  });

  it('dynamic buckets: compaction keeps the hash index, later upserts still replace their keys', async () => {
    const wh = await mkdtemp(join(tmpdir(), 'tidemark-pk-dyn-compact-'));
    const catalog = new FileSystemCatalog(wh);
    await catalog.createTable('db.t', {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { 'write-only': 'true' }, // bucket = -1, Paimon's default for primary-key tables
    });
    const table = await openTable(catalog.tableLocation('db.t'));
    for (let i = 0; i < 6; i++)
      await table.append([
        { k: i, v: `a${i}` },
        { k: i + 1, v: `b${i}` },
      ]);
    const before = await rowsAt(table);
    const index = (await table.snapshotManager.latest())!.indexManifest;
    const s = await compactPrimaryKeyTable(table, { full: true });
    expect(s.snapshotId).toBe(7);
    expect((await table.snapshotManager.snapshot(7)).indexManifest).toBe(index);
    expect(await rowsAt(table)).toEqual(before);
    await table.append([
      { k: 3, v: 'new' },
      { k: 100, v: 'x' },
    ]);
    const after = await rowsAt(table);
    expect(after.filter((r) => r.startsWith('[3,'))).toEqual(['[3,"new"]']);
    expect(after).toHaveLength(before.length + 1);
  });

  it('refuses append tables and non-partition predicates; an empty deletion-vector table has nothing to compact', async () => {
    await expect(compactPrimaryKeyTable(await createTable(TYPED_SPEC))).rejects.toThrow(/append table/);
    // Deletion-vector tables are compacted now (test/deletion-vectors-pk.test.ts covers it); an empty one commits nothing.
    await expect(compactPrimaryKeyTable(await createPkTable({ 'deletion-vectors.enabled': 'true' }))).resolves.toMatchObject({
      snapshotId: null,
    });
    const table = await createPkTable({});
    await expect(compactPrimaryKeyTable(table, { where: 'k > 3' })).rejects.toThrow(MaintenanceArgumentError);
    await expect(compactPrimaryKeyTable(table, { where: "dt = '2024-01-01'" })).resolves.toMatchObject({ snapshotId: null });
  });

  it('an aborted run commits nothing and deletes what it wrote', async () => {
    const table = await createPkTable({});
    await randomCommits(table, newHistory(), 11, 6, { deletes: true, nulls: false });
    const before = await rowsAt(table);
    const latest = (await table.snapshotManager.latest())!.id;
    const files = new Set(await parquetFilesOnDisk(table));
    const abort = new AbortController();
    await expect(
      compactPrimaryKeyTable(table, {
        full: true,
        signal: abort.signal,
        onProgress: (p) => {
          if (p.filesDone >= 8) abort.abort();
        },
      }),
    ).rejects.toThrow(MaintenanceAbortedError);
    expect((await table.snapshotManager.latest())!.id).toBe(latest);
    expect(await rowsAt(table)).toEqual(before);
    expect(new Set(await parquetFilesOnDisk(table))).toEqual(files);
  });

  it('a compaction whose inputs a concurrent compaction replaced gives up cleanly', async () => {
    const table = await createPkTable({});
    await randomCommits(table, newHistory(), 7, 6, { deletes: true, nulls: false });
    const before = await rowsAt(table);
    const latest = (await table.snapshotManager.latest())!.id;
    let winner: number | null = null;
    // The loser's snapshot create first lets a second compaction of the same buckets commit.
    const io = hookedFileIO(new LocalFileIO(), async () => {
      const other = await compactPrimaryKeyTable(await openTable(table.location, { fileIO: new LocalFileIO() }), { full: true });
      winner = other.snapshotId;
    });
    const loserTable = await openTable(table.location, { fileIO: io });
    const loser = await compactPrimaryKeyTable(loserTable, { full: true });
    expect(winner).toBe(latest + 1);
    expect(loser.snapshotId).toBeNull();
    expect(loser.gaveUp?.windows).toBe(4);
    expect(loser.gaveUp?.reason).toMatch(/no longer live/);
    expect((await table.snapshotManager.latest())!.id).toBe(latest + 1);
    expect(await rowsAt(table)).toEqual(before);
    // The loser's files are gone: every data file on disk belongs to some snapshot.
    const used = await filesOfAllSnapshots(table);
    expect((await parquetFilesOnDisk(table)).filter((f) => !used.has(f))).toEqual([]);
    // Both runs cleared their in-flight records.
    const inflight: string[] = [];
    for await (const st of table.fileIO.list(`${table.location}/inflight`)) inflight.push(st.path);
    expect(inflight).toEqual([]);
  });
});
