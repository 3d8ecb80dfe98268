import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, StreamStartError, expireSnapshots, openTable, type ChangeBatch, type Table } from '../src/index.js';

let n = 0;
async function table(options: Record<string, string>, pk = true): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://stream-read-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    ...(pk ? { primaryKeys: ['k'] } : {}),
    options: { bucket: pk ? '2' : '-1', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

type Change = { s: number; kind: string; k: number; v: string | null };

function changesOf(b: ChangeBatch): Change[] {
  return b.batch.toArray().map((r) => {
    const o = r.toJSON() as { k: number; v: string | null; _row_kind: string };
    return { s: b.snapshotId, kind: o._row_kind, k: o.k, v: o.v };
  });
}

async function collect(stream: AsyncIterable<ChangeBatch>): Promise<{ batches: ChangeBatch[]; changes: Change[] }> {
  const batches: ChangeBatch[] = [];
  for await (const b of stream) batches.push(b);
  return { batches, changes: batches.flatMap(changesOf) };
}

async function state(t: Table, snapshotId: number): Promise<string[]> {
  const rows = (await t.newRead({ snapshotId }).toArrowTable()).toArray().map((r) => r.toJSON() as { k: number; v: string });
  return rows.map((r) => `${r.k}=${r.v}`).sort();
}

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** Random upserts, updates (-U/+U pairs) and deletes with consistent before-images. */
async function randomWorkload(t: Table, commits: number, seed: number): Promise<void> {
  const rand = rng(seed);
  const model = new Map<number, string>();
  for (let c = 0; c < commits; c++) {
    const rows: Array<{ k: number; v: string | null; op: string }> = [];
    for (let i = 0; i < 6; i++) {
      const k = Math.floor(rand() * 8);
      const old = model.get(k);
      const v = `c${c}i${i}`;
      if (old === undefined) {
        rows.push({ k, v, op: '+I' });
        model.set(k, v);
      } else if (rand() < 0.3) {
        rows.push({ k, v: old, op: '-D' });
        model.delete(k);
      } else {
        rows.push({ k, v: old, op: '-U' }, { k, v, op: '+U' });
        model.set(k, v);
      }
    }
    await t.append(rows, { rowKindField: 'op' });
  }
}

/** Replays changes into a key → value model. */
function replay(model: Map<number, string | null>, changes: readonly Change[]): void {
  for (const c of changes) {
    if (c.kind === '+I' || c.kind === '+U') model.set(c.k, c.v);
    else model.delete(c.k);
  }
}

describe('streaming reads', () => {
  for (const producer of ['input', 'none']) {
    it(`the change stream replayed into an empty model equals the table at every snapshot (changelog-producer = ${producer})`, async () => {
      const t = await table({ 'changelog-producer': producer, 'num-sorted-run.compaction-trigger': '2' });
      await randomWorkload(t, 8, producer === 'input' ? 7 : 11);
      const latest = (await t.snapshotManager.latestId())!;
      const { changes } = await collect(t.newStreamRead({ from: 'earliest', to: latest, pollIntervalMs: 1 }));
      const kinds = new Set<string>();
      for (const id of await t.snapshotManager.sortedIds()) {
        const s = await t.snapshotManager.snapshot(id);
        const mine = changes.filter((c) => c.s === id);
        if (s.commitKind !== 'APPEND') expect(mine, `snapshot ${id} (${s.commitKind})`).toEqual([]);
        mine.forEach((c) => kinds.add(c.kind));
      }
      const model = new Map<number, string | null>();
      for (let id = 1; id <= latest; id++) {
        replay(
          model,
          changes.filter((c) => c.s === id),
        );
        expect([...model].map(([k, v]) => `${k}=${v}`).sort(), `snapshot ${id}`).toEqual(await state(t, id));
      }
      expect(kinds.has('-D')).toBe(true);
      // The input producer hands out every input row (updates as -U/+U pairs); without it the
      // writer's merged records (one per key and flush) are what the delta files hold.
      expect(kinds.has('-U')).toBe(producer === 'input');
      const commitKinds = await Promise.all(
        (await t.snapshotManager.sortedIds()).map(async (id) => (await t.snapshotManager.snapshot(id)).commitKind),
      );
      expect(commitKinds).toContain('COMPACT');
    });
  }

  it("'latest' starts with the latest snapshot as +I rows, then follows new snapshots", async () => {
    const t = await table({ 'changelog-producer': 'input' });
    await t.append([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
    ]);
    await t.append([{ k: 1, v: 'a2' }]);
    const seen: ChangeBatch[] = [];
    for await (const b of t.newStreamRead({ from: 'latest', pollIntervalMs: 5, maxSnapshots: 2 })) {
      seen.push(b);
      if (b.full && b.lastOfSnapshot)
        await t.append(
          [
            { k: 3, v: 'c' },
            { k: 2, v: 'b', op: '-D' },
          ],
          { rowKindField: 'op' },
        );
    }
    const changes = seen.flatMap(changesOf);
    expect(seen[0]!.full).toBe(true);
    expect(
      changes
        .filter((c) => c.s === 2)
        .map((c) => `${c.kind} ${c.k}=${c.v}`)
        .sort(),
    ).toEqual(['+I 1=a2', '+I 2=b']);
    expect(
      changes
        .filter((c) => c.s === 3)
        .map((c) => `${c.kind} ${c.k}=${c.v}`)
        .sort(),
    ).toEqual(['+I 3=c', '-D 2=b']);
    expect(seen[seen.length - 1]!.lastOfSnapshot).toBe(true);
  });

  it('append tables stream their inserts as +I; a timestamp start picks the first snapshot at or after it', async () => {
    const t = await table({}, false);
    await t.append([{ k: 1, v: 'a' }]);
    await new Promise((r) => setTimeout(r, 5));
    const between = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await t.append([
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    const all = await collect(t.newStreamRead({ from: 'earliest', to: 2 }));
    expect(all.changes.map((c) => `${c.s} ${c.kind} ${c.k}`)).toEqual(['1 +I 1', '2 +I 2', '2 +I 3']);
    const later = await collect(t.newStreamRead({ from: new Date(between), to: 2 }));
    expect(later.changes.map((c) => c.k)).toEqual([2, 3]);
    const byText = await collect(t.newStreamRead({ from: new Date(between).toISOString(), to: 2 }));
    expect(byText.changes.map((c) => c.k)).toEqual([2, 3]);
    await expect(collect(t.newStreamRead({ from: 'yesterday-ish' }))).rejects.toThrow(StreamStartError);
  });

  it('records consumer progress as Paimon does, resumes from it, and never records an unfinished snapshot', async () => {
    const t = await table({ 'changelog-producer': 'input' });
    for (let i = 1; i <= 4; i++) await t.append([{ k: i, v: `v${i}` }]);
    const consumers = t.consumers();
    const first = await collect(t.newStreamRead({ from: 'earliest', consumerId: 'job-1', maxSnapshots: 2 }));
    expect([...new Set(first.changes.map((c) => c.s))]).toEqual([1, 2]);
    const text = new TextDecoder().decode(await t.fileIO.read(`${t.location}/consumer/consumer-job-1`));
    expect(text).toBe('{\n  "nextSnapshot" : 3\n}');
    expect(await consumers.list()).toMatchObject([{ id: 'job-1', nextSnapshot: 3 }]);

    // Stop after the last batch of snapshot 3 without asking for more: 3 is not finished.
    for await (const b of t.newStreamRead({ from: 'earliest', consumerId: 'job-1' })) {
      expect(b.snapshotId).toBe(3);
      if (b.lastOfSnapshot) break;
    }
    expect(await consumers.nextSnapshot('job-1')).toBe(3);
    // The consumer's progress wins over `from`.
    const rest = await collect(t.newStreamRead({ from: 'latest', consumerId: 'job-1', to: 4 }));
    expect(rest.changes.map((c) => `${c.s} ${c.k}`)).toEqual(['3 3', '4 4']);
    expect(await consumers.nextSnapshot('job-1')).toBe(5);
    expect(await consumers.deleteConsumer('job-1')).toBe(true);
    expect(await consumers.list()).toEqual([]);
    expect(() => t.newStreamRead({ consumerId: '../x' })).toThrow(/invalid consumer id/);
  });

  it('expiration keeps every snapshot a consumer needs until the consumer expires', async () => {
    const t = await table({ 'changelog-producer': 'input', 'snapshot.num-retained.min': '1', 'consumer.expiration-time': '1 h' });
    for (let i = 1; i <= 5; i++) await t.append([{ k: i, v: `v${i}` }]);
    await t.consumers().resetConsumer('slow', 2);
    const now = Date.now() + 1000;
    const r = await expireSnapshots(t, { olderThanMs: now, now: () => now });
    expect(r.earliestSnapshotId).toBe(2);
    const resumed = await collect(t.newStreamRead({ consumerId: 'slow', to: 5 }));
    expect(resumed.changes.map((c) => c.s)).toEqual([2, 3, 4, 5]);
    expect(await t.consumers().nextSnapshot('slow')).toBe(6);
    await t.consumers().resetConsumer('slow', 2);
    // Two hours later the consumer is stale: it is removed and holds nothing back.
    const later = Date.now() + 2 * 3_600_000;
    const r2 = await expireSnapshots(t, { olderThanMs: later, now: () => later });
    expect(r2.earliestSnapshotId).toBe(5);
    expect(await t.consumers().list()).toEqual([]);
    // A consumer behind the earliest snapshot cannot resume silently.
    await t.consumers().resetConsumer('lost', 3);
    await expect(collect(t.newStreamRead({ consumerId: 'lost' }))).rejects.toThrow(/consumer 'lost'.*needs snapshot 3.*expired/);
  });

  it('a stream that fell behind an expiration killed mid-batch fails as expired, not on a leftover snapshot file', async () => {
    const t = await table({ 'changelog-producer': 'none' }, false);
    for (let i = 1; i <= 6; i++) await t.append([{ k: i, v: `v${i}` }]);
    const it = t.newStreamRead({ from: 1, pollIntervalMs: 1 })[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done === false && first.value.snapshotId).toBe(1);
    // The stream is at snapshot 2. An expiration runs up to 5, then snapshot-2 reappears as a
    // leftover of a cut batch (what a kill during a DeleteObjects can leave below EARLIEST).
    const leftover = await t.fileIO.read(t.paths.snapshotPath(2));
    const now = Date.now() + 1000;
    expect((await expireSnapshots(t, { retainMin: 2, olderThanMs: now, now: () => now })).earliestSnapshotId).toBe(5);
    await t.fileIO.write(t.paths.snapshotPath(2), leftover);
    await expect(it.next()).rejects.toThrow(/snapshot 2 of .* expired before the stream read it \(earliest is 5\)/);
  });

  it("OVERWRITE snapshots produce nothing unless 'streaming-read-overwrite' is set; their input changelog is kept", async () => {
    const t = await table({ 'changelog-producer': 'input' });
    await t.append([{ k: 1, v: 'a' }]);
    await t.overwrite([{ k: 2, v: 'b' }]);
    const s2 = await t.snapshotManager.snapshot(2);
    expect(s2.commitKind).toBe('OVERWRITE');
    expect(s2.changelogRecordCount).toBe(1);
    const plain = await collect(t.newStreamRead({ from: 'earliest', to: 2 }));
    expect(plain.changes.map((c) => `${c.s} ${c.kind} ${c.k}`)).toEqual(['1 +I 1']);
    const t2 = await table({ 'changelog-producer': 'none', 'streaming-read-overwrite': 'true' }, false);
    await t2.append([{ k: 1, v: 'a' }]);
    await t2.overwrite([{ k: 2, v: 'b' }]);
    const all = await collect(t2.newStreamRead({ from: 'earliest', to: 2 }));
    expect(all.changes.map((c) => `${c.s} ${c.kind} ${c.k}`)).toEqual(['1 +I 1', '2 +I 2']);
  });
});
