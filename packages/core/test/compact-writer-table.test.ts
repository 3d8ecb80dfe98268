/**
 * Compaction run by the writers of primary-key tables (Table.append / delete): once a bucket
 * reaches `num-sorted-run.compaction-trigger` sorted runs the writing commit is followed by a
 * COMPACT snapshot; what every snapshot reads stays what the writes said; `write-only` tables
 * never compact; `full-compaction.delta-commits` = 1 puts every commit's data into the top level;
 * first-row tables become readable at once (level 0 is always compacted up).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { DataFileMeta } from '@tidemark/format';
import { FileSystemCatalog, openTable, type Table } from '../src/index.js';
import { createTestTable, dataFile, liveFileNames, message } from './commit-helpers.js';

let n = 0;
async function pkTable(options: Record<string, string> = {}): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://pk-writer-compact-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'BIGINT' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function rows(table: Table, snapshotId?: number): Promise<string[]> {
  const t = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  return t
    .toArray()
    .map((r) => JSON.stringify(r.toJSON(), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)))
    .sort();
}

async function kinds(table: Table): Promise<string[]> {
  const out: string[] = [];
  for (const id of await table.snapshotManager.sortedIds()) out.push((await table.snapshotManager.snapshot(id)).commitKind);
  return out;
}

/** 8 commits of upserts and deletes over keys 0..19, with the model of what the table holds after each. */
async function history(table: Table, deletes = true): Promise<Map<number, string[]>[]> {
  const model = new Map<number, { k: number; v: string; n: bigint }>();
  const states: Map<number, string[]>[] = [];
  for (let c = 0; c < 8; c++) {
    const upserts = [];
    for (let i = 0; i < 6; i++) {
      const k = (c * 7 + i * 3) % 20;
      const row = { k, v: `c${c}-${i}`, n: BigInt(c * 100 + i) };
      upserts.push(row);
      model.set(k, row);
    }
    await table.append(upserts);
    if (deletes && c % 3 === 2) {
      const k = (c * 5) % 20;
      await table.delete([{ k }]);
      model.delete(k);
    }
    const id = (await table.snapshotManager.latest())!.id;
    const expected = [...model.values()].map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
    states.push(new Map([[id, expected]]));
  }
  return states;
}

describe('compaction by primary-key writers', () => {
  it('compacts once a bucket has 5 sorted runs, never changing what a snapshot reads', async () => {
    const table = await pkTable();
    const states = await history(table);
    const k = await kinds(table);
    expect(k).toContain('COMPACT');
    // Every COMPACT snapshot directly follows the APPEND of the same write.
    k.forEach((kind, i) => {
      if (kind === 'COMPACT') expect(k[i - 1]).toBe('APPEND');
    });
    for (const s of states) for (const [id, expected] of s) expect(await rows(table, id)).toEqual(expected);
    const plan = await table.newRead().plan();
    for (const split of plan.splits) {
      expect(split.files.some((f) => f.meta.level > 0)).toBe(true);
      // The writers keep each bucket below the trigger (5 runs) after every commit.
      const runs =
        split.files.filter((f) => f.meta.level === 0).length +
        new Set(split.files.filter((f) => f.meta.level > 0).map((f) => f.meta.level)).size;
      expect(runs).toBeLessThan(5);
    }
    // A COMPACT snapshot reads exactly like the APPEND before it.
    for (const [i, kind] of k.entries()) if (kind === 'COMPACT') expect(await rows(table, i + 1)).toEqual(await rows(table, i));
  });

  it('write-only tables are never compacted by writers', async () => {
    const table = await pkTable({ 'write-only': 'true' });
    const states = await history(table);
    expect(await kinds(table)).not.toContain('COMPACT');
    const last = states[states.length - 1]!;
    for (const [id, expected] of last) expect(await rows(table, id)).toEqual(expected);
    const plan = await table.newRead().plan();
    expect(plan.files().every((f) => f.level === 0)).toBe(true);
  });

  it('full-compaction.delta-commits = 1 leaves every bucket as one top-level run after each write', async () => {
    const table = await pkTable({ 'full-compaction.delta-commits': '1' });
    const states = await history(table);
    for (const s of states) for (const [id, expected] of s) expect(await rows(table, id)).toEqual(expected);
    const plan = await table.newRead().plan();
    for (const split of plan.splits) {
      expect(split.files.map((f) => f.meta.level)).toEqual(split.files.map(() => 5));
      for (const f of split.files) expect(f.meta.deleteRowCount).toBe(0);
    }
  });

  it('first-row tables are readable right after each write (level 0 is always compacted up)', async () => {
    const table = await pkTable({ 'merge-engine': 'first-row' });
    await table.append([
      { k: 1, v: 'first', n: 1n },
      { k: 2, v: 'first', n: 2n },
    ]);
    expect(await rows(table)).toEqual(['{"k":1,"v":"first","n":"1n"}', '{"k":2,"v":"first","n":"2n"}']);
    await table.append([
      { k: 1, v: 'second', n: 10n },
      { k: 3, v: 'first', n: 3n },
    ]);
    expect(await rows(table)).toEqual(['{"k":1,"v":"first","n":"1n"}', '{"k":2,"v":"first","n":"2n"}', '{"k":3,"v":"first","n":"3n"}']);
    const plan = await table.newRead().plan();
    expect(plan.files().every((f) => f.level > 0)).toBe(true);
  });

  it('a writer whose compaction lost its inputs to another writer commits its data without it', async () => {
    const table = await pkTable({ bucket: '1' });
    for (let c = 0; c < 4; c++) await table.append([{ k: c, v: `base${c}`, n: BigInt(c) }]);
    // Writer A prepares a commit whose compaction takes the 4 base runs and its own new file.
    const a = table.newBatchWrite();
    await a.write([{ k: 100, v: 'A', n: 100n }]);
    const messages = await a.prepareCommit();
    expect(messages[0]!.compactBefore?.length).toBe(5);
    const outputs = messages[0]!.compactAfter!.map((f) => f.fileName);
    // Writer B does the same and commits first.
    await table.append([{ k: 200, v: 'B', n: 200n }]);
    const latest = (await table.snapshotManager.latest())!.id;
    expect((await table.snapshotManager.snapshot(latest)).commitKind).toBe('COMPACT');
    const warnings: string[] = [];
    const result = await table.newCommit({ logger: { warn: (m) => warnings.push(m) } }).commit({ identifier: 1n, messages });
    await a.close();
    expect(result.status).toBe('committed');
    if (result.status === 'committed') expect(result.snapshotIds).toHaveLength(1);
    expect((await table.snapshotManager.latest())!.commitKind).toBe('APPEND');
    expect(await rows(table)).toEqual([
      '{"k":0,"v":"base0","n":"0n"}',
      '{"k":1,"v":"base1","n":"1n"}',
      '{"k":100,"v":"A","n":"100n"}',
      '{"k":2,"v":"base2","n":"2n"}',
      '{"k":200,"v":"B","n":"200n"}',
      '{"k":3,"v":"base3","n":"3n"}',
    ]);
    // A's compaction outputs are gone.
    const plan = await table.newRead().plan();
    const dir = plan.splits[0]!.bucketPath;
    for (const name of outputs) expect(await table.fileIO.exists(`${dir}/${name}`)).toBe(false);
  });

  it('a dropped compaction (lost race) deletes only files it wrote, never an input it moved up', async () => {
    const t = await createTestTable({ partitioned: false });
    const path = (name: string): string => t.paths.dataFilePath('', 0, name);
    const put = async (...files: DataFileMeta[]): Promise<void> => {
      for (const f of files) await t.io.write(path(f.fileName), new Uint8Array([1]));
    };
    const live = dataFile(10);
    const other = dataFile(5);
    await put(live, other);
    await t.commit.commit({ identifier: 1n, messages: [message(undefined, { newFiles: [live, other] })] }, { commitUser: 'w' });
    // Another compaction replaces `other` first.
    const theirs = dataFile(5, undefined, 5);
    await put(theirs);
    await t.commit.commit(
      { identifier: 2n, messages: [message(undefined, { compactBefore: [other], compactAfter: [theirs] })] },
      { commitUser: 'c' },
    );
    // Ours: new data, and a compaction moving `live` up unchanged and rewriting `other`.
    const fresh = dataFile(3);
    const ours = dataFile(15, undefined, 5);
    await put(fresh, ours);
    const result = await t.commit.commit(
      {
        identifier: 3n,
        messages: [message(undefined, { newFiles: [fresh], compactBefore: [live, other], compactAfter: [{ ...live, level: 5 }, ours] })],
      },
      { commitUser: 'w' },
    );
    expect(result.status === 'committed' && result.compactionDropped !== undefined).toBe(true);
    expect(await t.io.exists(path(live.fileName))).toBe(true);
    expect(await t.io.exists(path(fresh.fileName))).toBe(true);
    expect(await t.io.exists(path(ours.fileName))).toBe(false);
    expect(await liveFileNames(t)).toEqual([live.fileName, fresh.fileName, theirs.fileName].sort());
  });
});

/** Runs `hook` once, just before the `skip + 1`-th snapshot create from now, so another commit lands there first. */
class InterleavingFileIO extends MemoryFileIO {
  private pending: { skip: number; hook: () => Promise<void> } | null = null;
  beforeSnapshot(skip: number, hook: () => Promise<void>): void {
    this.pending = { skip, hook };
  }
  override async createIfAbsent(path: string, data: Uint8Array | string) {
    if (this.pending !== null && /\/snapshot\/snapshot-\d+$/.test(path)) {
      if (this.pending.skip-- === 0) {
        const { hook } = this.pending;
        this.pending = null;
        await hook();
      }
    }
    return super.createIfAbsent(path, data);
  }
}

describe('writer compaction with several writers of one bucket', () => {
  /**
   * Writer A's commit is APPEND then COMPACT; writer B, which started from the same snapshot and
   * wrote the same key, commits its APPEND between the two. A's compaction output carries A's
   * (older) record of the key; B's record must still win, in every snapshot from B's on.
   */
  it("a compaction committed after another writer's newer write of the same key never shadows it", async () => {
    const io = new InterleavingFileIO();
    const catalog = new FileSystemCatalog(`memory://pk-writer-interleave-${process.pid}-${++n}/wh`, { fileIO: io });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1' },
    });
    const table = await openTable(catalog.tableLocation('db.t'), { fileIO: io });
    for (let c = 0; c < 4; c++)
      await table.append([
        { k: 1, v: `base${c}` },
        { k: 10 + c, v: 'x' },
      ]);
    expect(await kinds(table)).toEqual(['APPEND', 'APPEND', 'APPEND', 'APPEND']);

    // Both writers continue the bucket from snapshot 4: same sequence numbers for key 1.
    const a = table.newBatchWrite();
    await a.write([{ k: 1, v: 'A' }]);
    const aMessages = await a.prepareCommit();
    const b = table.newBatchWrite();
    await b.write([
      { k: 1, v: 'B' },
      { k: 2, v: 'B' },
    ]);
    const bMessages = await b.prepareCommit();
    // A's commit carries a compaction that merged its own new file with the base runs.
    expect(aMessages[0]!.compactAfter?.length).toBeGreaterThan(0);
    expect(aMessages[0]!.compactBefore?.map((f) => f.fileName)).toContain(aMessages[0]!.newFiles[0]!.fileName);

    let bResult: Awaited<ReturnType<ReturnType<Table['newCommit']>['commit']>> | undefined;
    io.beforeSnapshot(1, async () => {
      bResult = await table.newCommit({ commitUser: 'B' }).commit({ identifier: 1n, messages: bMessages });
    });
    const aResult = await table.newCommit({ commitUser: 'A' }).commit({ identifier: 1n, messages: aMessages, properties: { value: 'A' } });
    await a.close();
    await b.close();
    expect(aResult).toMatchObject({ status: 'committed', snapshotIds: [5, 7] });
    // B lost the sequence race to A's APPEND (snapshot 5), so its files were re-sequenced above A's
    // and its own compaction, which merged them at the old numbers, was dropped.
    expect(bResult).toMatchObject({ status: 'committed', snapshotIds: [6] });
    expect(bResult!.status === 'committed' && bResult!.resequencedFiles).toBeGreaterThan(0);
    // B's writer compacted too; the dropped compaction is reported, so that a writer that compacts
    // level 0 at every checkpoint knows to compact the bucket again.
    expect(bMessages[0]!.compactAfter?.length).toBeGreaterThan(0);
    expect(bResult!.status === 'committed' && bResult!.compactionDropped).toMatch(/bucket 0 was dropped: .*re-sequenced/);
    expect(await kinds(table)).toEqual(['APPEND', 'APPEND', 'APPEND', 'APPEND', 'APPEND', 'APPEND', 'COMPACT']);

    const value = async (snapshotId: number) =>
      (await table.newRead({ snapshotId }).toArrowTable()).toArray().find((r: { k: number }) => r.k === 1)?.v as string;
    expect(await value(5)).toBe('A');
    expect(await value(6)).toBe('B');
    expect(await value(7)).toBe('B');
    // The COMPACT snapshot repeats its commit's properties, yet wrote no new value: "the latest
    // snapshot that wrote a key" is the latest APPEND (or OVERWRITE) holding it, never a COMPACT.
    expect((await table.snapshotManager.snapshot(7)).properties).toEqual({ value: 'A' });
    // A's compaction really replaced A's file: key 1 lives in the compaction output and B's file only.
    const live = (await table.newRead().plan()).files();
    expect(live.some((f) => f.fileName === aMessages[0]!.newFiles[0]!.fileName)).toBe(false);
    expect(await rows(table)).toEqual([
      '{"k":1,"v":"B"}',
      '{"k":10,"v":"x"}',
      '{"k":11,"v":"x"}',
      '{"k":12,"v":"x"}',
      '{"k":13,"v":"x"}',
      '{"k":2,"v":"B"}',
    ]);
  });
});
