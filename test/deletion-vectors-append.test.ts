/**
 * Deletes on append tables with `deletion-vectors.enabled`, on local disk and on the real S3
 * server, for fixed buckets and bucket-unaware tables:
 * - model-checked: random appends and `delete({ where })`; every snapshot read by time travel
 *   equals the model, data files are never rewritten by a delete (the data manifests of a delete
 *   snapshot add and remove nothing), deleted rows are marked in deletion vectors; a full
 *   compaction then rewrites the files without the deleted rows and drops their vectors;
 * - updates (`update({ where, set })`) in the same workload: old versions marked in vectors, new
 *   ones written, in one snapshot;
 * - without the option, a delete or update is refused with an error naming it, and nothing is committed;
 * - `tidemark delete <append-table> --where ...` deletes through the same path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type CommitResult, type Table } from '@tidemark/core';
import { readDeletionVector, type Snapshot } from '@tidemark/format';
import { compactAppendTable } from '@tidemark/maintenance';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { runMain, type MainResult } from './support/cli-main.js';
import { seededRandom as rng } from './support/seeded-random.mjs';
import { columns } from './support/table-definitions.mjs';

type Row = { id: number; g: string; v: number };

const show = (r: Row): string => `${r.id}|${r.g}|${r.v}`;

async function appendTable(root: string, backend: BackendWarehouse, name: string, options: Record<string, string>): Promise<Table> {
  const catalog = new FileSystemCatalog(root, { fileIO: backend.io });
  await catalog.createTable(`db.${name}`, {
    fields: columns('id INT NOT NULL', 'g STRING', 'v INT'),
    partitionKeys: ['g'],
    options,
  });
  return openTable(catalog.tableLocation(`db.${name}`), { fileIO: backend.io });
}

async function read(table: Table, snapshotId: number): Promise<string[]> {
  return (await table.newRead({ snapshotId }).toArrowTable())
    .toArray()
    .map((r) => show(r.toJSON() as Row))
    .sort();
}

/** The snapshot a delete or update committed; null (its result `empty`) when it matched no row. */
async function changeSnapshot(table: Table, result: CommitResult, changed: number): Promise<Snapshot | null> {
  if (changed === 0) {
    expect(result.status).toBe('empty');
    return null;
  }
  expect(result.status).toBe('committed');
  return result.status === 'committed' ? table.snapshotManager.snapshot(result.snapshotId) : null;
}

/** The latest snapshot's read plan, the rows of its data files and how many of them its deletion vectors mark. */
async function latestRowCounts(table: Table) {
  const plan = await table.newRead().plan();
  let rows = 0;
  let marked = 0;
  for (const split of plan.splits) {
    for (const f of split.files) {
      rows += f.meta.rowCount;
      const ref = split.deletionFiles.get(f.meta.fileName);
      if (ref) marked += (await readDeletionVector(table.fileIO, ref.path, ref.range)).cardinality;
    }
  }
  return { plan, rows, marked };
}

async function modelChecked(table: Table, seed: number, steps: number): Promise<void> {
  const random = rng(seed);
  let model: Row[] = [];
  const expected = new Map<number, string[]>();
  let next = 0;
  let marked = 0;
  let updates = 0;
  for (let s = 0; s < steps; s++) {
    if (s > 0 && random() < 0.45) {
      const lo = Math.floor(random() * 100);
      const hi = lo + Math.floor(random() * 30);
      const where = random() < 0.5 ? `v >= ${lo} AND v < ${hi}` : `g = 'a' AND v < ${hi}`;
      const match = (r: Row): boolean => (where.startsWith('v') ? r.v >= lo && r.v < hi : r.g === 'a' && r.v < hi);
      const gone = model.filter(match).length;
      const before = await table.snapshotManager.latest();
      if (random() < 0.4) {
        // An update: the matching rows get new values (sometimes moving to the other partition).
        const nv = Math.floor(random() * 120);
        const set: Partial<Row> = random() < 0.5 ? { v: nv } : { g: random() < 0.5 ? 'a' : 'b', v: nv };
        const { updated, result } = await table.update({ where, set });
        expect(updated).toBe(gone);
        model = model.map((r) => (match(r) ? { ...r, ...set } : r));
        const snap = await changeSnapshot(table, result, gone);
        if (snap === null) continue;
        // One snapshot: the new versions are added and the old ones marked in the vectors.
        expect(snap.deltaRecordCount).toBe(gone);
        expect(snap.indexManifest).not.toBe(before?.indexManifest);
        marked += gone;
        updates++;
        expected.set(snap.id, model.map(show).sort());
        continue;
      }
      const { deleted, result } = await table.delete({ where });
      expect(deleted).toBe(gone);
      model = model.filter((r) => !match(r));
      const snap = await changeSnapshot(table, result, gone);
      if (snap === null) continue;
      expect(snap.commitKind).toBe('OVERWRITE');
      // No data file was rewritten: the snapshot's delta adds and removes nothing.
      expect(snap.deltaRecordCount).toBe(0);
      expect(snap.indexManifest).not.toBe(before?.indexManifest);
      marked += gone;
      expected.set(snap.id, model.map(show).sort());
    } else {
      const rows: Row[] = Array.from({ length: 5 + Math.floor(random() * 30) }, () => ({
        id: next++,
        g: random() < 0.5 ? 'a' : 'b',
        v: Math.floor(random() * 120),
      }));
      const result = await table.append(rows);
      model.push(...rows);
      expect(result.status).toBe('committed');
      if (result.status === 'committed') expected.set(result.snapshotId, model.map(show).sort());
    }
  }
  expect(marked).toBeGreaterThan(0);
  expect(updates).toBeGreaterThan(0);
  for (const [id, rows] of expected) expect(await read(table, id), `snapshot ${id}`).toEqual(rows);
  // The vectors of the latest snapshot hold exactly the deleted rows.
  const { rows: total, marked: vectors } = await latestRowCounts(table);
  expect(total - vectors).toBe(model.length);
  expect(vectors).toBe(marked);

  // Compaction rewrites the files without their deleted rows and drops their vectors.
  const compacted = await compactAppendTable(table, { full: true });
  expect(compacted.snapshotId).not.toBeNull();
  const { rows, marked: left, plan: after } = await latestRowCounts(table);
  const rewritten = new Set(after.splits.flatMap((s) => s.files.map((f) => f.meta.fileName)));
  for (const split of after.splits) for (const name of split.deletionFiles.keys()) expect(rewritten.has(name)).toBe(true);
  expect(rows - left).toBe(model.length);
  expect(left).toBeLessThan(vectors);
  expect(await read(table, compacted.snapshotId!)).toEqual(model.map(show).sort());
}

/**
 * A workload case commits, reads every snapshot back and compacts: on the S3 server it took 33–52 s
 * with another test file running beside it, too close to vitest's 60 s default.
 */
const WORKLOAD_TIMEOUT_MS = 240_000;

describe.each(storageBackends('dv append deletes'))('deletes on append tables with deletion vectors on $name', (backend) => {
  let warehouse: BackendWarehouse;
  afterAll(async () => {
    if (warehouse) await warehouse.cleanup();
  });
  const open = async (): Promise<BackendWarehouse> => (warehouse ??= await backend.open());

  it.skipIf(!backend.available)(
    'fixed buckets: every snapshot reads as the model',
    async () => {
      const w = await open();
      const t = await appendTable(`${w.root}/wh`, w, 'fixed', { bucket: '2', 'bucket-key': 'id', 'deletion-vectors.enabled': 'true' });
      await modelChecked(t, 3, backend.name === 'S3' ? 10 : 20);
    },
    WORKLOAD_TIMEOUT_MS,
  );

  it.skipIf(!backend.available)(
    'bucket-unaware, with DV files rolled at a tiny target size',
    async () => {
      const w = await open();
      const t = await appendTable(`${w.root}/wh`, w, 'unaware', {
        'deletion-vectors.enabled': 'true',
        'deletion-vector.index-file.target-size': '1b',
      });
      await modelChecked(t, 5, backend.name === 'S3' ? 10 : 20);
    },
    WORKLOAD_TIMEOUT_MS,
  );

  it.skipIf(!backend.available)('without deletion vectors a delete is refused, naming the option', async () => {
    const w = await open();
    const t = await appendTable(`${w.root}/wh`, w, 'plain', {});
    await t.append([{ id: 1, g: 'a', v: 1 }]);
    await expect(t.delete({ where: 'v = 1' })).rejects.toThrow(/'deletion-vectors\.enabled' = 'true'/);
    await expect(t.update({ where: 'v = 1', set: { v: 2 } })).rejects.toThrow(/'deletion-vectors\.enabled' = 'true'/);
    expect(await t.snapshotManager.latestId()).toBe(1);
  });
});

describe('tidemark delete and update on an append table', () => {
  it('deletes and updates by --where with deletion vectors, and refuses a table without them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-dv-cli-'));
    try {
      const run = (argv: string[]): Promise<MainResult> => runMain(argv, { stdin: '', cwd: dir });
      const schema = '[{"name":"id","type":"INT NOT NULL"},{"name":"v","type":"STRING"}]';
      expect((await run(['create', 'wh/db.db/t', '--schema', schema, '--option', 'deletion-vectors.enabled=true'])).code).toBe(0);
      expect((await run(['create', 'wh/db.db/p', '--schema', schema])).code).toBe(0);
      for (const t of ['wh/db.db/t', 'wh/db.db/p']) {
        const input = join(dir, 'rows.jsonl');
        const { writeFileSync } = await import('node:fs');
        writeFileSync(input, ['{"id":1,"v":"a"}', '{"id":2,"v":"b"}', '{"id":3,"v":"c"}'].join('\n') + '\n');
        expect((await run(['write', t, '--input', input])).code).toBe(0);
      }
      const ok = await run(['delete', 'wh/db.db/t', '--where', 'id >= 2']);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      const rows = (await run(['read', 'wh/db.db/t', '--format', 'jsonl'])).stdout.trim().split('\n');
      expect(rows.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1]);
      const refused = await run(['delete', 'wh/db.db/p', '--where', 'id >= 2']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/deletion-vectors\.enabled/);

      // update: the matching row gets its new value in one snapshot; the others are untouched.
      const write2 = join(dir, 'more.jsonl');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(write2, ['{"id":4,"v":"d"}', '{"id":5,"v":"e"}'].join('\n') + '\n');
      expect((await run(['write', 'wh/db.db/t', '--input', write2])).code).toBe(0);
      const updated = await run(['update', 'wh/db.db/t', '--where', 'id = 4', '--set', '{"v": "dd"}', '--json']);
      expect(updated.stderr).toBe('');
      expect(JSON.parse(updated.stdout)).toMatchObject({ updated: 1, status: 'committed' });
      const after = (await run(['read', 'wh/db.db/t', '--format', 'jsonl'])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number; v: string });
      expect(after.sort((a, b) => a.id - b.id)).toEqual([
        { id: 1, v: 'a' },
        { id: 4, v: 'dd' },
        { id: 5, v: 'e' },
      ]);
      const badSet = await run(['update', 'wh/db.db/t', '--where', 'id = 4', '--set', '{"nope": 1}']);
      expect(badSet.code).not.toBe(0);
      expect(badSet.stderr).toMatch(/column 'nope'/);
      const refusedUpdate = await run(['update', 'wh/db.db/p', '--where', 'id = 1', '--set', '{"v": "x"}']);
      expect(refusedUpdate.code).not.toBe(0);
      expect(refusedUpdate.stderr).toMatch(/deletion-vectors\.enabled/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
