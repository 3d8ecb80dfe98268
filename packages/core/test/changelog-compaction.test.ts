import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList } from '@tidemark/format';
import { FileSystemCatalog, openTable, type ChangeBatch, type Table } from '../src/index.js';

let n = 0;
async function table(options: Record<string, string>, buckets = '1'): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://changelog-compaction-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'INT' },
    ],
    primaryKeys: ['k'],
    options: { bucket: buckets, ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

type Row = { k: number; v: string | null; n?: number | null; op?: string };

/** The changes of snapshots `from`..`to`, as `<kind> k=v` strings in stream order, per snapshot. */
async function changes(t: Table, from: number, to: number): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for await (const b of t.newStreamRead({ from, to, pollIntervalMs: 1 })) {
    const list = out.get(b.snapshotId) ?? [];
    for (const r of rowsOf(b)) list.push(`${r.kind} ${r.k}=${r.v}`);
    out.set(b.snapshotId, list);
  }
  return out;
}

function rowsOf(b: ChangeBatch): Array<{ kind: string; k: number; v: string | null }> {
  return b.batch.toArray().map((r) => {
    const o = r.toJSON() as { k: number; v: string | null; _row_kind: string };
    return { kind: o._row_kind, k: o.k, v: o.v };
  });
}

async function state(t: Table, snapshotId: number): Promise<string[]> {
  const rows = (await t.newRead({ snapshotId }).toArrowTable()).toArray().map((r) => r.toJSON() as { k: number; v: string });
  return rows.map((r) => `${r.k}=${r.v}`).sort();
}

async function latestId(t: Table): Promise<number> {
  return (await t.snapshotManager.latest())!.id;
}

/** One long-lived writer committing each batch of rows in turn (as a streaming job does); the snapshot ids of each commit. */
async function commitEach(t: Table, batches: readonly Row[][]): Promise<number[][]> {
  const writer = t.newBatchWrite({ rowKindField: 'op' });
  const commit = t.newCommit();
  const ids: number[][] = [];
  try {
    for (let i = 0; i < batches.length; i++) {
      await writer.write(batches[i]!.map((r) => ({ op: '+I', ...r })));
      const result = await commit.commit({ identifier: BigInt(i + 1), messages: await writer.prepareCommit() });
      ids.push(result.status === 'committed' ? [...result.snapshotIds] : []);
    }
  } finally {
    await writer.close();
  }
  return ids;
}

describe("changelog-producer = 'lookup'", () => {
  it('emits +I for new keys, -U/+U with the old and new values, -D with the old value, in the COMPACT snapshot of each commit', async () => {
    const t = await table({ 'changelog-producer': 'lookup' });
    await t.append([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    await t.append(
      [
        { k: 1, v: 'a2', op: '+U' },
        { k: 2, v: 'b', op: '-D' },
        { k: 4, v: 'd', op: '+I' },
        { k: 5, v: 'e', op: '-D' },
      ],
      { rowKindField: 'op' },
    );
    const last = await latestId(t);
    const snapshots = await Promise.all([1, 2, 3, 4].map((id) => t.snapshotManager.snapshot(id)));
    expect(snapshots.map((s) => s.commitKind)).toEqual(['APPEND', 'COMPACT', 'APPEND', 'COMPACT']);
    expect(last).toBe(4);
    // APPEND snapshots carry no changelog: it is produced when level 0 is compacted.
    expect(snapshots.map((s) => !!s.changelogManifestList)).toEqual([false, true, false, true]);
    const c = await changes(t, 1, last);
    expect([...c.keys()]).toEqual([2, 4]);
    expect(c.get(2)).toEqual(['+I 1=a', '+I 2=b', '+I 3=c']);
    // Key 5 never existed: its delete changes nothing; key 3 was not written: no change.
    expect(c.get(4)).toEqual(['-U 1=a', '+U 1=a2', '-D 2=b', '+I 4=d']);
    expect(await state(t, 4)).toEqual(['1=a2', '3=c', '4=d']);
    // The changelog files are listed as Java lists compaction changelog: ADD entries of
    // `changelog-` files in the bucket directory, at the output level, file source APPEND.
    const s4 = snapshots[3]!;
    const entries = [];
    for (const m of await readManifestList(t.fileIO, t.paths.manifestPath(s4.changelogManifestList!))) {
      for await (const e of readManifestEntries(t.fileIO, t.paths.manifestPath(m.fileName))) entries.push(e);
    }
    expect(entries.map((e) => [e.kind, e.file.level, e.file.fileSource])).toEqual([['ADD', 5, 0]]);
    expect(entries[0]!.file.fileName).toMatch(/^changelog-[0-9a-f-]{36}-\d+\.parquet$/);
    expect(entries[0]!.file.rowCount).toBe(4);
    expect(entries[0]!.file.deleteRowCount).toBe(2);
    expect(Number(s4.changelogRecordCount)).toBe(4);
    expect(await t.fileIO.exists(t.paths.dataFilePath(entries[0]!.partition, 0, entries[0]!.file.fileName))).toBe(true);
  });

  it('looks old values up in levels below the output level when the compaction does not include them', async () => {
    // Universal compaction keeps older data in the max level while level 0 goes to a level between.
    const t = await table({ 'changelog-producer': 'lookup', 'num-levels': '4', 'num-sorted-run.compaction-trigger': '10' });
    await t.append(Array.from({ length: 20 }, (_, k) => ({ k, v: `v${k}` })));
    await t.append([{ k: 3, v: 'x3' }]);
    // The level-0 compaction went to a level below the max level, which kept the old rows.
    const levels = (await t.newRead().plan()).splits.flatMap((s) => s.files.map((f) => f.meta.level));
    expect(new Set(levels)).toEqual(new Set([2, 3]));
    await t.append([
      { k: 3, v: 'y3' },
      { k: 7, v: 'y7' },
    ]);
    const last = await latestId(t);
    const c = await changes(t, 1, last);
    const all = [...c.values()];
    expect(all[0]).toHaveLength(20);
    expect(all[1]).toEqual(['-U 3=v3', '+U 3=x3']);
    expect(all[2]).toEqual(['-U 3=x3', '+U 3=y3', '-U 7=v7', '+U 7=y7']);
  });

  it("leaves out unchanged -U/+U pairs with 'changelog-producer.row-deduplicate'", async () => {
    for (const dedup of [false, true]) {
      const t = await table({ 'changelog-producer': 'lookup', 'changelog-producer.row-deduplicate': String(dedup) });
      await t.append([
        { k: 1, v: 'a', n: 1 },
        { k: 2, v: 'b', n: 1 },
      ]);
      await t.append([
        { k: 1, v: 'a', n: 1 },
        { k: 2, v: 'b', n: 2 },
      ]);
      const c = await changes(t, 1, await latestId(t));
      const second = [...c.values()][1];
      expect(second).toEqual(dedup ? ['-U 2=b', '+U 2=b'] : ['-U 1=a', '+U 1=a', '-U 2=b', '+U 2=b']);
    }
    // Ignored fields do not count as a change.
    const t = await table({
      'changelog-producer': 'lookup',
      'changelog-producer.row-deduplicate': 'true',
      'changelog-producer.row-deduplicate-ignore-fields': 'n',
    });
    await t.append([{ k: 1, v: 'a', n: 1 }]);
    await t.append([{ k: 1, v: 'a', n: 2 }]);
    const c = await changes(t, 1, await latestId(t));
    expect([...c.values()]).toEqual([['+I 1=a']]);
  });
});

describe("changelog-producer = 'lookup' with other merge engines", () => {
  it('first-row: only keys seen for the first time are changes', async () => {
    const t = await table({ 'changelog-producer': 'lookup', 'merge-engine': 'first-row' });
    await t.append([{ k: 1, v: 'a' }]);
    await t.append([
      { k: 1, v: 'b' },
      { k: 2, v: 'c' },
    ]);
    const c = await changes(t, 1, await latestId(t));
    expect([...c.values()]).toEqual([['+I 1=a'], ['+I 2=c']]);
    expect(await state(t, await latestId(t))).toEqual(['1=a', '2=c']);
  });

  it('aggregation: the old value is the aggregate so far, the new one the aggregate after the commit', async () => {
    const t = await table({ 'changelog-producer': 'lookup', 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum' });
    await t.append([{ k: 1, v: 'a', n: 5 }]);
    await t.append([{ k: 1, v: 'a', n: 7 }]);
    await t.append([{ k: 1, v: 'b', n: 1 }]);
    const rows: string[] = [];
    for await (const b of t.newStreamRead({ from: 1, to: await latestId(t), pollIntervalMs: 1 })) {
      for (const r of b.batch.toArray()) {
        const o = r.toJSON() as { v: string; n: number; _row_kind: string };
        rows.push(`${o._row_kind} ${o.v} ${o.n}`);
      }
    }
    expect(rows).toEqual(['+I a 5', '-U a 5', '+U a 12', '-U a 12', '+U b 13']);
  });
});

describe("changelog-producer = 'full-compaction'", () => {
  it('compares each key before and after every full compaction (full-compaction.delta-commits)', async () => {
    const t = await table({ 'changelog-producer': 'full-compaction', 'full-compaction.delta-commits': '2' });
    await commitEach(t, [
      [
        { k: 1, v: 'a' },
        { k: 2, v: 'b' },
      ],
      [
        { k: 1, v: 'a1', op: '+U' },
        { k: 3, v: 'c', op: '+I' },
      ],
      [
        { k: 1, v: 'a2', op: '+U' },
        { k: 2, v: 'b', op: '-D' },
      ],
      [{ k: 1, v: 'a3' }],
    ]);
    const last = await latestId(t);
    const kinds = await Promise.all(Array.from({ length: last }, (_, i) => t.snapshotManager.snapshot(i + 1)));
    expect(kinds.map((s) => s.commitKind)).toEqual(['APPEND', 'APPEND', 'COMPACT', 'APPEND', 'APPEND', 'COMPACT']);
    const c = await changes(t, 1, last);
    expect([...c.keys()]).toEqual([3, 6]);
    // The first full compaction sees no old values; intermediate values (a1) never show.
    expect(c.get(3)).toEqual(['+I 1=a1', '+I 2=b', '+I 3=c']);
    expect(c.get(6)).toEqual(['-U 1=a1', '+U 1=a3', '-D 2=b']);
  });

  it('produces changelog on every commit by default', async () => {
    const t = await table({ 'changelog-producer': 'full-compaction' });
    await t.append([{ k: 1, v: 'a' }]);
    await t.append([{ k: 1, v: 'b' }]);
    const c = await changes(t, 1, await latestId(t));
    expect([...c.values()]).toEqual([['+I 1=a'], ['-U 1=a', '+U 1=b']]);
  });
});

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/**
 * Replays the change stream of snapshots 1..last into an empty model and checks it against the
 * table at every snapshot with changelog. With `strict` every -U/-D must retract the value the
 * model holds, every +I must insert a key the model lacks and every +U must follow its -U.
 */
async function checkReplay(t: Table, strict: boolean, at?: ReadonlySet<number>): Promise<number> {
  const last = await latestId(t);
  const model = new Map<number, string | null>();
  let checked = 0;
  let previous: string | null = null;
  const verify = async (id: number): Promise<void> => {
    if (at !== undefined && !at.has(id)) return;
    const expected = await state(t, id);
    const got = [...model].map(([k, v]) => `${k}=${v}`).sort();
    expect(got, `model after the changelog of snapshot ${id}`).toEqual(expected);
    checked++;
  };
  let current: number | null = null;
  for await (const b of t.newStreamRead({ from: 'earliest', to: last, pollIntervalMs: 1 })) {
    if (current !== null && b.snapshotId !== current) await verify(current);
    current = b.snapshotId;
    for (const r of rowsOf(b)) {
      const where = `snapshot ${b.snapshotId}: ${r.kind} ${r.k}=${r.v}`;
      if (r.kind === '+I' || r.kind === '+U') {
        if (strict) expect(model.has(r.k), where).toBe(false);
        if (strict && r.kind === '+U') expect(previous, where).toBe(`-U ${r.k}`);
        model.set(r.k, r.v);
      } else {
        if (strict) expect(model.get(r.k), where).toBe(r.v);
        model.delete(r.k);
      }
      previous = `${r.kind} ${r.k}`;
    }
  }
  if (current !== null) await verify(current);
  return checked;
}

/** Random upserts and deletes of 30 keys (all of them in the first commit), committed by one writer. */
async function randomWorkload(t: Table, commits: number, seed: number): Promise<number[][]> {
  const rand = rng(seed);
  const batches: Row[][] = [Array.from({ length: 30 }, (_, k) => ({ k, v: `init${k}` }))];
  for (let c = 1; c < commits; c++) {
    const rows: Row[] = [];
    const count = 1 + Math.floor(rand() * 12);
    for (let i = 0; i < count; i++) {
      const k = Math.floor(rand() * 30);
      const p = rand();
      rows.push(p < 0.2 ? { k, v: null, op: '-D' } : { k, v: `c${c}i${i}`, op: p < 0.6 ? '+I' : '+U' });
    }
    batches.push(rows);
  }
  return commitEach(t, batches);
}

describe('the change stream of a random workload replays into the table', () => {
  // Input changelog is in the APPEND snapshot, lookup changelog in the COMPACT one after it.
  const cases: Array<[string, Record<string, string>, boolean, (ids: number[]) => number]> = [
    ['input', { 'changelog-producer': 'input' }, false, (ids) => ids[0]!],
    ['lookup', { 'changelog-producer': 'lookup', 'num-sorted-run.compaction-trigger': '3', 'num-levels': '4' }, true, (ids) => ids[1]!],
    // With deletion vectors a key moving out of level 0 marks its old row instead of rewriting the
    // file; the lookup that finds the old value must then skip rows already marked.
    [
      'lookup with deletion vectors',
      { 'changelog-producer': 'lookup', 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '3', 'num-levels': '4' },
      true,
      (ids) => ids[ids.length - 1]!,
    ],
  ];
  for (const [name, options, strict, pick] of cases) {
    it(`${name}: at every snapshot`, async () => {
      for (const seed of [1, 7]) {
        const t = await table(options, '2');
        const commits = await randomWorkload(t, 14, seed);
        const checked = await checkReplay(t, strict, new Set(commits.map(pick)));
        expect(checked).toBe(14);
      }
    });
  }

  it('full-compaction: at every full-compaction snapshot', async () => {
    for (const seed of [1, 7]) {
      const t = await table({ 'changelog-producer': 'full-compaction', 'full-compaction.delta-commits': '3' }, '2');
      const commits = await randomWorkload(t, 14, seed);
      const full = commits.filter((_, i) => (i + 1) % 3 === 0).map((ids) => ids[ids.length - 1]!);
      for (const id of full) expect((await t.snapshotManager.snapshot(id)).commitKind).toBe('COMPACT');
      const checked = await checkReplay(t, true, new Set(full));
      expect(checked).toBe(full.length);
    }
  });
});
