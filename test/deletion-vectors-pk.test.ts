/**
 * Deletion-vector primary-key tables written by tidemark, on local disk and on the real S3 server:
 * - model-checked: random upserts and deletes; every snapshot, read by time travel, equals the
 *   model of what the table held after the writes committed up to it. Each write commits an
 *   APPEND snapshot (level-0 files, which batch reads skip: it still reads the previous state) and
 *   a COMPACT snapshot that moved them up, marking replaced rows in deletion vectors;
 * - after every write no level-0 file is left, and the live rows of levels >= 1 minus the rows
 *   the vectors delete are exactly the model's rows (no merge needed, no duplicate);
 * - two writers of one bucket committing concurrently lose no deletion: the later compaction is
 *   refused (its DV file would drop the other's vectors) and the next write compacts its data.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO, S3FileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { readDeletionVector } from '@tidemark/format';
import { verifyTable } from '@tidemark/maintenance';
import { s3Available, s3TestOptions, s3TestRoot } from './support/s3.js';
import { seededRandom as rng } from './support/seeded-random.mjs';
import { columns } from './support/table-definitions.mjs';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

type Row = { k: number; p: string; v: string; n: bigint };

const key = (r: { k: number; p: string }): string => `${r.p}|${r.k}`;
const show = (r: Row): string => `${r.p}|${r.k}|${r.v}|${r.n}`;

async function dvTable(root: string, io: FileIO): Promise<Table> {
  const catalog = new FileSystemCatalog(root, { fileIO: io });
  await catalog.createTable('db.dv', {
    fields: columns('k INT NOT NULL', 'p STRING NOT NULL', 'v STRING', 'n BIGINT'),
    partitionKeys: ['p'],
    primaryKeys: ['p', 'k'],
    // A low trigger so that buckets keep several levels and lookups reach past the output level.
    options: { bucket: '2', 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '3' },
  });
  return openTable(catalog.tableLocation('db.dv'), { fileIO: io });
}

async function readRows(table: Table, snapshotId: number): Promise<string[]> {
  const t = await table.newRead({ snapshotId }).toArrowTable();
  return t
    .toArray()
    .map((r) => {
      const o = r.toJSON() as Row;
      return show({ ...o, n: BigInt(o.n) });
    })
    .sort();
}

/** Live rows of levels >= 1 minus deleted positions; also asserts level 0 is empty. */
async function liveRowsAfterVectors(table: Table, snapshotId: number): Promise<{ rows: number; deleted: number }> {
  const plan = await table.newRead({ snapshotId }).plan();
  let rows = 0;
  let deleted = 0;
  for (const split of plan.splits) {
    for (const f of split.files) {
      expect(f.meta.level, `level-0 file ${f.meta.fileName} left in snapshot ${snapshotId}`).toBeGreaterThan(0);
      rows += f.meta.rowCount;
      const ref = split.deletionFiles.get(f.meta.fileName);
      if (ref !== undefined) deleted += (await readDeletionVector(table.fileIO, ref.path, ref.range)).cardinality;
    }
  }
  return { rows: rows - deleted, deleted };
}

async function modelChecked(table: Table, seed: number, writes: number): Promise<void> {
  const random = rng(seed);
  const model = new Map<string, Row>();
  const expected = new Map<number, string[]>();
  let previous: string[] = [];
  let vectorsSeen = 0;
  let counter = 0;
  for (let w = 0; w < writes; w++) {
    const before = [...model.values()].map(show).sort();
    let result;
    if (w > 0 && random() < 0.3) {
      const victims = [...model.values()].filter(() => random() < 0.25).map((r) => ({ k: r.k, p: r.p }));
      if (victims.length === 0) continue;
      for (const v of victims) model.delete(key(v));
      result = (await table.delete(victims)).result;
    } else {
      const rows: Row[] = [];
      const seen = new Set<string>();
      const count = 5 + Math.floor(random() * 25);
      for (let i = 0; i < count; i++) {
        const r: Row = { k: Math.floor(random() * 60), p: random() < 0.5 ? 'a' : 'b', v: `w${w}-${i}`, n: BigInt(counter++) };
        if (seen.has(key(r))) continue;
        seen.add(key(r));
        rows.push(r);
        model.set(key(r), r);
      }
      result = await table.append(rows);
    }
    expect(result.status).toBe('committed');
    if (result.status !== 'committed') return;
    const after = [...model.values()].map(show).sort();
    // The APPEND snapshot holds level-0 files only: batch reads skip them.
    const ids = result.snapshotIds;
    expect(ids.length).toBe(2);
    expect((await table.snapshotManager.snapshot(ids[0]!)).commitKind).not.toBe('COMPACT');
    expect((await table.snapshotManager.snapshot(ids[1]!)).commitKind).toBe('COMPACT');
    expected.set(ids[0]!, before);
    expected.set(ids[1]!, after);
    const live = await liveRowsAfterVectors(table, ids[1]!);
    expect(live.rows).toBe(model.size);
    vectorsSeen = Math.max(vectorsSeen, live.deleted);
    previous = after;
  }
  expect(vectorsSeen, 'no deletion vector was ever written').toBeGreaterThan(0);
  for (const [id, rows] of expected) expect(await readRows(table, id), `snapshot ${id}`).toEqual(rows);
  expect(await readRows(table, (await table.snapshotManager.latestId())!)).toEqual(previous);
}

async function concurrentWriters(table: Table): Promise<void> {
  await table.append(Array.from({ length: 40 }, (_, k) => ({ k, p: 'a', v: 'base', n: 0n })));
  await table.append(Array.from({ length: 40 }, (_, k) => ({ k, p: 'a', v: 'second', n: 1n })));
  // Two writers planned against the same snapshot update overlapping keys of the same buckets.
  const a = table.newBatchWrite();
  const b = table.newBatchWrite();
  await a.write(Array.from({ length: 20 }, (_, i) => ({ k: i, p: 'a', v: 'A', n: 2n })));
  await b.write(Array.from({ length: 20 }, (_, i) => ({ k: i + 10, p: 'a', v: 'B', n: 3n })));
  const ma = await a.prepareCommit();
  const mb = await b.prepareCommit();
  expect(ma.some((m) => (m.compactNewIndexFiles?.length ?? 0) > 0)).toBe(true);
  const ra = await table.newCommit().commit({ identifier: 1n, messages: ma });
  const rb = await table.newCommit().commit({ identifier: 1n, messages: mb });
  await a.close();
  await b.close();
  expect(ra.status).toBe('committed');
  expect(rb.status).toBe('committed');
  // B's compaction merged its records at sequence numbers A's commit overtook, and its DV files
  // would replace the ones A's compaction wrote: it is never committed (re-sequenced bucket, or
  // refused as a conflict). B's rows stay in level 0 until the next write compacts them.
  if (rb.status === 'committed') {
    expect(rb.snapshotIds.length === 1 || rb.compactionDropped !== undefined, JSON.stringify(rb)).toBe(true);
  }
  // The next write to those buckets compacts B's level-0 files too; every key has one live row.
  const r = await table.append(Array.from({ length: 20 }, (_, i) => ({ k: 100 + i, p: 'a', v: 'later', n: 4n })));
  expect(r.status).toBe('committed');
  const expectedRows = new Map<number, string>();
  for (let k = 0; k < 40; k++) expectedRows.set(k, 'second');
  for (let k = 0; k < 20; k++) expectedRows.set(k, 'A');
  for (let k = 10; k < 30; k++) expectedRows.set(k, 'B');
  for (let k = 100; k < 120; k++) expectedRows.set(k, 'later');
  const t = await table.newRead().toArrowTable();
  const got = new Map<number, string>();
  for (const row of t.toArray()) {
    const o = row.toJSON() as Row;
    expect(got.has(o.k), `key ${o.k} read twice`).toBe(false);
    got.set(o.k, o.v);
  }
  expect([...got.entries()].sort((x, y) => x[0] - y[0])).toEqual([...expectedRows.entries()].sort((x, y) => x[0] - y[0]));
  const latest = (await table.snapshotManager.latestId())!;
  expect((await liveRowsAfterVectors(table, latest)).rows).toBe(expectedRows.size);
}

async function overwriteVisible(table: Table): Promise<void> {
  await table.append([0, 1, 2, 3].flatMap((k) => ['a', 'b'].map((p) => ({ k, p, v: 'old', n: 0n }))));
  await table.append([{ k: 1, p: 'a', v: 'newer', n: 1n }]);
  // The overwrite's rows are visible at once: its writer compacts its own files, from no vectors.
  const r = await table.overwrite(
    [5, 6].map((k) => ({ k, p: 'a', v: 'over', n: 2n })),
    { partition: { p: 'a' } },
  );
  expect(r.status).toBe('committed');
  if (r.status !== 'committed') return;
  expect(await readRows(table, r.snapshotId)).toEqual(
    ['a|5|over|2', 'a|6|over|2', 'b|0|old|0', 'b|1|old|0', 'b|2|old|0', 'b|3|old|0'].sort(),
  );
  expect((await liveRowsAfterVectors(table, r.snapshotId)).rows).toBe(6);
  // No vector of the replaced partition's files is left behind (verify checks every DV file).
  expect((await verifyTable(table)).problems).toEqual([]);
}

describe('deletion-vector primary-key tables (local disk)', () => {
  it('an overwrite of a partition is visible at once and drops the old vectors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-dv-pk-o-'));
    dirs.push(dir);
    await overwriteVisible(await dvTable(join(dir, 'wh'), new LocalFileIO()));
  });

  it('every snapshot of a random upsert/delete history reads as the model; level 0 is never read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-dv-pk-'));
    dirs.push(dir);
    await modelChecked(await dvTable(join(dir, 'wh'), new LocalFileIO()), 7, 24);
  });

  it('concurrent writers of one bucket lose no deletion', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-dv-pk-c-'));
    dirs.push(dir);
    await concurrentWriters(await dvTable(join(dir, 'wh'), new LocalFileIO()));
  });
});

describe.skipIf(!s3Available('deletion-vector primary-key tables on S3'))('deletion-vector primary-key tables (S3)', () => {
  it('every snapshot of a random upsert/delete history reads as the model', async () => {
    const io = new S3FileIO(s3TestOptions());
    await modelChecked(await dvTable(`${s3TestRoot('dv-pk')}/wh`, io), 11, 10);
  });

  it('concurrent writers of one bucket lose no deletion', async () => {
    const io = new S3FileIO(s3TestOptions());
    await concurrentWriters(await dvTable(`${s3TestRoot('dv-pk-c')}/wh`, io));
  });
});
