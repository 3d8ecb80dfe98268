/**
 * Changelog producers and the changelog lifecycle through the public API, on local disk and on
 * the real S3 server:
 * - for each producer (input, lookup, full-compaction) the change stream of a random workload,
 *   replayed into an empty model, equals the table (at every commit; for full-compaction at every
 *   full compaction, including one run by `compactPrimaryKeyTable({ full: true })`); lookup and
 *   full-compaction retract exactly the values the model holds;
 * - a changelog retained longer than the snapshots outlives them in `changelog/`: a consumer
 *   positioned in the expired range streams its changes, orphan cleanup with a zero age keeps
 *   every live changelog file, verify checks them, and changelog expiration (dry run first)
 *   removes them once they are old enough.
 */
import { describe, expect, it } from 'vitest';
import { readManifestEntries, readManifestList } from '@tidemark/format';
import { ChangelogManager, type ChangeBatch, type Table } from '@tidemark/core';
import { compactPrimaryKeyTable, expireSnapshots, removeOrphanFiles, verifyTable } from '@tidemark/maintenance';
import { storageBackends } from './support/backends.js';
import { createUpsertTable, suiteCatalog, upsertRowsAt } from './support/suite-catalog.js';

type Row = { k: number; v: string | null; op: string };

function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** Random upserts and deletes of 24 keys; every key in the first batch. */
function workload(commits: number, seed: number): Row[][] {
  const rand = rng(seed);
  const batches: Row[][] = [Array.from({ length: 24 }, (_, k) => ({ k, v: `init${k}`, op: '+I' }))];
  for (let c = 1; c < commits; c++) {
    const rows: Row[] = [];
    const count = 1 + Math.floor(rand() * 10);
    for (let i = 0; i < count; i++) {
      const k = Math.floor(rand() * 24);
      const p = rand();
      rows.push(p < 0.25 ? { k, v: null, op: '-D' } : { k, v: `c${c}i${i}`, op: '+U' });
    }
    batches.push(rows);
  }
  return batches;
}

/** Commits each batch with one long-lived writer; returns the snapshot ids of each commit. */
async function commitEach(t: Table, batches: readonly Row[][]): Promise<number[][]> {
  const writer = t.newBatchWrite({ rowKindField: 'op' });
  const commit = t.newCommit();
  const ids: number[][] = [];
  try {
    for (let i = 0; i < batches.length; i++) {
      await writer.write(batches[i]!);
      const r = await commit.commit({ identifier: BigInt(i + 1), messages: await writer.prepareCommit() });
      ids.push(r.status === 'committed' ? [...r.snapshotIds] : []);
    }
  } finally {
    await writer.close();
  }
  return ids;
}

function rowsOf(b: ChangeBatch): Array<{ kind: string; k: number; v: string | null }> {
  return b.batch.toArray().map((r) => {
    const o = r.toJSON() as { k: number; v: string | null; _row_kind: string };
    return { kind: o._row_kind, k: o.k, v: o.v };
  });
}

const state = upsertRowsAt;

/**
 * Replays the stream of snapshots 1..latest and compares the model with the table at each id of
 * `at` (strict: retractions must carry the value the model holds, +I must be a new key).
 */
async function replay(t: Table, strict: boolean, at: ReadonlySet<number>): Promise<number> {
  const last = (await t.snapshotManager.latestId())!;
  const model = new Map<number, string | null>();
  let checked = 0;
  const verify = async (id: number): Promise<void> => {
    if (!at.has(id)) return;
    expect([...model].map(([k, v]) => `${k}=${v}`).sort(), `model after snapshot ${id}`).toEqual(await state(t, id));
    checked++;
  };
  let current: number | null = null;
  for await (const b of t.newStreamRead({ from: 'earliest', to: last, pollIntervalMs: 1 })) {
    if (current !== null && current !== b.snapshotId) await verify(current);
    current = b.snapshotId;
    for (const r of rowsOf(b)) {
      const where = `snapshot ${b.snapshotId}: ${r.kind} ${r.k}=${r.v}`;
      if (r.kind === '+I' || r.kind === '+U') {
        if (strict) expect(model.has(r.k), where).toBe(false);
        model.set(r.k, r.v);
      } else {
        if (strict) expect(model.get(r.k), where).toBe(r.v);
        model.delete(r.k);
      }
    }
  }
  if (current !== null) await verify(current);
  return checked;
}

/** Every file the changelog of snapshot (or long-lived changelog) `c` references. */
async function changelogFiles(t: Table, c: { changelogManifestList?: string | null }): Promise<string[]> {
  if (!c.changelogManifestList) return [];
  const out = [t.paths.manifestPath(c.changelogManifestList)];
  for (const m of await readManifestList(t.fileIO, t.paths.manifestPath(c.changelogManifestList))) {
    out.push(t.paths.manifestPath(m.fileName));
    for await (const e of readManifestEntries(t.fileIO, t.paths.manifestPath(m.fileName))) {
      out.push(t.paths.dataFilePath(e.partition, e.bucket, e.file.fileName));
    }
  }
  return out;
}

// Each case is a workload on the S3 server (24 s for the longest with another test file beside it):
// the timeout is a hang guard, not a speed check.
describe.each(storageBackends('changelog lifecycle'))('changelogs on $name', { timeout: 180_000 }, (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    const create = (options: Record<string, string>): Promise<Table> => createUpsertTable(env, options);

    it('input: the stream replays into the table at every commit', async () => {
      const t = await create({ 'changelog-producer': 'input' });
      const commits = await commitEach(t, workload(8, 3));
      expect(await replay(t, false, new Set(commits.map((ids) => ids[0]!)))).toBe(8);
    });

    it('lookup: the stream retracts exactly the old values and replays into the table at every commit', async () => {
      const t = await create({ 'changelog-producer': 'lookup', 'num-sorted-run.compaction-trigger': '3', 'num-levels': '4' });
      const commits = await commitEach(t, workload(8, 5));
      for (const ids of commits) expect((await t.snapshotManager.snapshot(ids[ids.length - 1]!)).commitKind).toBe('COMPACT');
      expect(await replay(t, true, new Set(commits.map((ids) => ids[ids.length - 1]!)))).toBeGreaterThanOrEqual(7);
    });

    it('full-compaction: at every full compaction, also one of compact --full on a write-only table', async () => {
      const t = await create({ 'changelog-producer': 'full-compaction', 'full-compaction.delta-commits': '2' });
      const commits = await commitEach(t, workload(8, 9));
      const full = commits.filter((_, i) => i % 2 === 1).map((ids) => ids[ids.length - 1]!);
      expect(await replay(t, true, new Set(full))).toBe(full.length);

      const w = await create({ 'changelog-producer': 'full-compaction', 'write-only': 'true' });
      await commitEach(w, workload(4, 11));
      expect((await w.snapshotManager.latest())!.changelogManifestList ?? null).toBeNull();
      const r = await compactPrimaryKeyTable(w, { full: true });
      expect(r.snapshotId).not.toBeNull();
      const s = await w.snapshotManager.snapshot(r.snapshotId!);
      expect(s.commitKind).toBe('COMPACT');
      expect(s.changelogManifestList).toBeTruthy();
      await commitEach(w, workload(3, 12));
      const r2 = await compactPrimaryKeyTable(w, { full: true });
      expect(await replay(w, true, new Set([r.snapshotId!, r2.snapshotId!]))).toBe(2);
    });

    it('a changelog retained longer than the snapshots outlives them: consumers, orphan cleanup, verify, expiration', async () => {
      const t = await create({
        'changelog-producer': 'input',
        // No writer compaction: one snapshot per commit keeps the ids simple.
        'num-sorted-run.compaction-trigger': '100',
        'snapshot.num-retained.min': '2',
        'snapshot.num-retained.max': '2',
        'changelog.num-retained.max': '100',
        'changelog.time-retained': '1 d',
      });
      // Each commit's own expiration keeps 2 snapshots; the rest of the changelog stays in changelog/.
      const batches = workload(6, 21);
      for (let i = 0; i < batches.length; i++) await t.append(batches[i]!, { rowKindField: 'op' });
      expect(await t.snapshotManager.earliestId()).toBe(5);
      const changelogs = new ChangelogManager(t.fileIO, t.paths);
      expect(await changelogs.earliestId()).toBe(1);
      expect(await changelogs.latestId()).toBe(4);
      const kept = await Promise.all([1, 2, 3, 4].map(async (id) => changelogFiles(t, (await changelogs.tryGet(id))!)));
      for (const files of kept) expect(files.length).toBeGreaterThanOrEqual(3);
      const exist = async (files: readonly string[]): Promise<boolean[]> => Promise.all(files.map((f) => t.fileIO.exists(f)));
      for (const files of kept) expect(await exist(files)).toEqual(files.map(() => true));

      // A consumer positioned in the expired range reads the kept changes, then the snapshots'.
      await t.consumers().resetConsumer('c1', 2);
      const seen: number[] = [];
      const changes: string[] = [];
      for await (const b of t.newStreamRead({ consumerId: 'c1', to: 6, pollIntervalMs: 1 })) {
        if (!seen.includes(b.snapshotId)) seen.push(b.snapshotId);
        for (const r of rowsOf(b)) changes.push(`${r.kind} ${r.k}`);
      }
      expect(seen).toEqual([2, 3, 4, 5, 6]);
      // The input changelog holds the written rows (per bucket in key order).
      const expected = batches.slice(1).flatMap((rows) => rows.map((r) => `${r.op} ${r.k}`));
      expect(changes.sort()).toEqual(expected.sort());
      expect(await t.consumers().nextSnapshot('c1')).toBe(7);
      // A start time inside the kept range starts at the first changelog committed at or after it.
      const times = await Promise.all([1, 2, 3, 4].map(async (id) => (await changelogs.tryGet(id))!.timeMillis));
      const firstAt3 = 1 + times.findIndex((ms) => ms >= times[2]!);
      const fromTime: number[] = [];
      for await (const b of t.newStreamRead({ from: new Date(times[2]!), to: 6, pollIntervalMs: 1 })) fromTime.push(b.snapshotId);
      expect(fromTime[0]).toBe(firstAt3);
      expect(new Set(fromTime)).toEqual(new Set(Array.from({ length: 7 - firstAt3 }, (_, i) => firstAt3 + i)));

      // Orphan cleanup with a zero age keeps every live changelog file.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const orphans = await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0, dryRun: true });
      expect(orphans.deleted).toEqual([]);
      await removeOrphanFiles(t, { olderThanMs: Date.now(), inProgressGraceMs: 0 });
      for (const files of kept) expect(await exist(files)).toEqual(files.map(() => true));

      const verified = await verifyTable(t, { all: true });
      expect(verified.problems).toEqual([]);
      expect(verified.changelogsChecked).toEqual([1, 2, 3, 4]);
      // A deleted changelog file is reported.
      const victim = kept[1]![kept[1]!.length - 1]!;
      const bytes = await t.fileIO.read(victim);
      await t.fileIO.delete(victim);
      const broken = await verifyTable(t, { all: true, metadataOnly: true });
      expect(broken.problems.map((p) => p.path)).toContain(victim);
      await t.fileIO.write(victim, bytes);

      // Within changelog.time-retained nothing of the changelog goes.
      expect((await expireSnapshots(t)).changelogsExpired).toBe(0);
      // Two days later, changelog expiration (dry run first) removes the changelogs and their files.
      const later = Date.now() + 2 * 86_400_000;
      const dry = await expireSnapshots(t, { now: () => later, dryRun: true });
      expect(dry.changelogsExpired).toBe(4);
      expect(dry.deleted).toEqual(expect.arrayContaining([t.paths.changelogMetaPath(1), t.paths.changelogMetaPath(4), ...kept.flat()]));
      expect(await changelogs.earliestId()).toBe(1);
      const real = await expireSnapshots(t, { now: () => later });
      expect(real.changelogsExpired).toBe(4);
      expect(await changelogs.earliestId()).toBeNull();
      for (const files of kept) expect(await exist(files)).toEqual(files.map(() => false));
      // The retained snapshots' changelog is untouched and still streams.
      const tail = [];
      for await (const b of t.newStreamRead({ from: 'earliest', to: 6, pollIntervalMs: 1 })) tail.push(b.snapshotId);
      expect([...new Set(tail)]).toEqual([5, 6]);
    });

    it('changelog expiration never removes what a consumer still needs', async () => {
      const t = await create({
        'changelog-producer': 'input',
        'num-sorted-run.compaction-trigger': '100',
        'snapshot.num-retained.min': '1',
        'snapshot.num-retained.max': '1',
        'changelog.num-retained.max': '100',
      });
      for (const rows of workload(5, 31)) await t.append(rows, { rowKindField: 'op' });
      const changelogs = new ChangelogManager(t.fileIO, t.paths);
      expect([await changelogs.earliestId(), await changelogs.latestId()]).toEqual([1, 4]);
      await t.consumers().resetConsumer('slow', 3);
      const later = Date.now() + 2 * 3_600_000;
      const r = await expireSnapshots(t, { now: () => later });
      expect(r.changelogsExpired).toBe(2);
      expect(await changelogs.earliestId()).toBe(3);
      const seen = new Set<number>();
      for await (const b of t.newStreamRead({ consumerId: 'slow', to: 5, pollIntervalMs: 1 })) seen.add(b.snapshotId);
      expect([...seen]).toEqual([3, 4, 5]);
    });
  });
});
