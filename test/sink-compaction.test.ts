/**
 * Compaction in the exactly-once sink's writers, on local disk and on the real S3 server: a
 * streaming ingest of upserts and deletes into a primary-key table compacts as `Table` writers do.
 * - universal compaction: level 0 stays bounded, COMPACT snapshots follow the checkpoints' APPEND
 *   ones, and the table equals a serial model of the source at every checkpoint;
 * - `write-only` = true: nothing compacts, every checkpoint's files stay on level 0;
 * - deletion vectors: level 0 is empty at every checkpoint (batch reads skip it), rows equal the model;
 * - `changelog-producer` = `lookup`: the change stream retracts exactly the values the model holds
 *   and replays into the table at every checkpoint;
 * - a concurrent `compactPrimaryKeyTable` replaces the inputs of a sink writer's compaction: that
 *   compaction is dropped, its checkpoint's data commits, the writers start over from the table
 *   and compact again;
 * - a stop between a checkpoint's APPEND and COMPACT snapshots: the restore commits the compaction
 *   once (not twice, not on a second restore), or, when a concurrent compaction replaced its
 *   inputs meanwhile, drops it and deletes its outputs.
 */
import { describe, expect, it } from 'vitest';
import { liveEntries, newTableCommit, openTable, type ChangeBatch, type CommitMessage, type Table } from '@tidemark/core';
import { compactPrimaryKeyTable } from '@tidemark/maintenance';
import {
  FileIOCheckpointStore,
  SinkCommitter,
  SinkWriter,
  tableFingerprint,
  type CheckpointInfo,
  type SinkCommitterOptions,
} from '@tidemark/sink';
import { storageBackends } from './support/backends.js';
import { arraySource, ingestCollectingCheckpoints } from './support/sink-runs.js';
import { createUpsertTable, suiteCatalog, upsertRowsAt } from './support/suite-catalog.js';
import { upsertWorkload, type UpsertOp } from './support/upsert-workload.js';

type Op = UpsertOp;

/** `n` upserts and deletes of `keys` keys; every version distinct. */
const workload = upsertWorkload;

/** The table a serial application of the first `upTo` records gives, as sorted `k=v` strings. */
function model(ops: readonly Op[], upTo: number): string[] {
  const m = new Map<number, string>();
  for (const o of ops.slice(0, upTo)) {
    if (o.op === '-D') m.delete(o.k);
    else m.set(o.k, o.v!);
  }
  return [...m].map(([k, v]) => `${k}=${v}`).sort();
}

const rowsAt = upsertRowsAt;

/** Live data files of snapshot `id` by level. */
async function levels(t: Table, snapshotId: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const e of (await liveEntries(t.fileIO, t.paths, await t.snapshotManager.snapshot(snapshotId))).values()) {
    out.set(e.file.level, (out.get(e.file.level) ?? 0) + 1);
  }
  return out;
}

async function commitKinds(t: Table): Promise<string[]> {
  const kinds: string[] = [];
  for await (const s of t.snapshotManager.iterateForward()) kinds.push(s.commitKind);
  return kinds;
}

/** The last snapshot each checkpoint committed, with the source offset it covers. */
/** Checkpoints whose writers' compaction was dropped (it lost to another compaction) while their data committed. */
function droppedCompactions(infos: readonly CheckpointInfo[]): bigint[] {
  return infos
    .filter((i) => i.commits.some((c) => c.result.status === 'committed' && c.result.compactionDropped))
    .map((i) => i.checkpointId);
}

function checkpointSnapshots(infos: readonly CheckpointInfo[]): Array<{ snapshotId: number; offset: number }> {
  const out: Array<{ snapshotId: number; offset: number }> = [];
  for (const info of infos) {
    for (const c of info.commits)
      if (c.result.status === 'committed') out.push({ snapshotId: c.result.snapshotId, offset: info.offset as number });
  }
  return out;
}

describe.each(storageBackends('sink compaction'))('sink writers compact on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    // Every snapshot kept, so the table can be read at every checkpoint.
    const create = (options: Record<string, string>): Promise<Table> =>
      createUpsertTable(env, { 'snapshot.num-retained.min': '1000', 'snapshot.num-retained.max': '1000', ...options });

    async function ingest(t: Table, ops: readonly Op[], extra: { before?: (i: number) => Promise<void> } = {}) {
      const run = await ingestCollectingCheckpoints({
        table: t.location,
        fileIO: env.wh.io,
        source: arraySource(ops, 'ops:test', extra.before),
        checkpointEvery: 15,
        parallelism: 2,
        rowKindField: 'op',
      });
      expect(run.summary.status).toBe('source-done');
      return run;
    }

    it('universal compaction: level 0 bounded, COMPACT snapshots, the serial model at every checkpoint', async () => {
      const t = await create({ 'num-sorted-run.compaction-trigger': '3' });
      const ops = workload(180, 30, 1);
      const { infos } = await ingest(t, ops);
      expect(infos.length).toBe(12);
      const kinds = await commitKinds(t);
      expect(kinds.filter((k) => k === 'COMPACT').length).toBeGreaterThanOrEqual(3);
      for (const { snapshotId, offset } of checkpointSnapshots(infos)) {
        expect(await rowsAt(t, snapshotId), `snapshot ${snapshotId} (offset ${offset})`).toEqual(model(ops, offset));
        // Two buckets, each compacted once it holds three sorted runs: never more than 2 × 2 level-0 files.
        expect((await levels(t, snapshotId)).get(0) ?? 0, `level-0 files at snapshot ${snapshotId}`).toBeLessThanOrEqual(4);
      }
    });

    it('write-only = true: no compaction, every checkpoint adds level-0 files', async () => {
      const t = await create({ 'num-sorted-run.compaction-trigger': '3', 'write-only': 'true' });
      const ops = workload(180, 30, 1);
      const { infos } = await ingest(t, ops);
      expect(await commitKinds(t)).not.toContain('COMPACT');
      const latest = (await t.snapshotManager.latestId())!;
      const byLevel = await levels(t, latest);
      expect([...byLevel.keys()]).toEqual([0]);
      // Both buckets get rows in each of the 12 checkpoints of 15 records over 30 keys.
      expect(byLevel.get(0)).toBeGreaterThanOrEqual(20);
      expect(await rowsAt(t, latest)).toEqual(model(ops, ops.length));
      expect(infos.length).toBe(12);
    });

    it('deletion vectors: level 0 empty and the serial model at every checkpoint', async () => {
      const t = await create({ 'deletion-vectors.enabled': 'true' });
      const ops = workload(150, 25, 2);
      const { infos } = await ingest(t, ops);
      const checkpoints = checkpointSnapshots(infos);
      expect(checkpoints.length).toBe(10);
      for (const { snapshotId, offset } of checkpoints) {
        expect((await t.snapshotManager.snapshot(snapshotId)).commitKind).toBe('COMPACT');
        expect((await levels(t, snapshotId)).get(0) ?? 0).toBe(0);
        expect(await rowsAt(t, snapshotId), `snapshot ${snapshotId}`).toEqual(model(ops, offset));
      }
      // Updates of keys in upper levels were marked deleted in vectors, not rewritten.
      expect((await t.snapshotManager.latest())!.indexManifest).toBeTruthy();
    });

    it("changelog-producer = lookup: the change stream retracts the model's values and replays into the table", async () => {
      const t = await create({ 'changelog-producer': 'lookup' });
      const ops = workload(150, 25, 3);
      const { infos } = await ingest(t, ops);
      const at = new Map(checkpointSnapshots(infos).map((c) => [c.snapshotId, c.offset]));
      const last = (await t.snapshotManager.latestId())!;
      const replay = new Map<number, string>();
      let checked = 0;
      let current: number | null = null;
      const verify = async (id: number): Promise<void> => {
        const offset = at.get(id);
        if (offset === undefined) return;
        expect([...replay].map(([k, v]) => `${k}=${v}`).sort(), `replay up to snapshot ${id}`).toEqual(model(ops, offset));
        checked++;
      };
      for await (const b of t.newStreamRead({ from: 'earliest', to: last, pollIntervalMs: 1 }) as AsyncIterable<ChangeBatch>) {
        if (current !== null && current !== b.snapshotId) await verify(current);
        current = b.snapshotId;
        for (const r of b.batch.toArray()) {
          const o = r.toJSON() as { k: number; v: string | null; _row_kind: string };
          const where = `snapshot ${b.snapshotId}: ${o._row_kind} ${o.k}=${o.v}`;
          if (o._row_kind === '+I' || o._row_kind === '+U') {
            // An update is retracted (-U with the old value) before its +U.
            expect(replay.has(o.k), where).toBe(false);
            replay.set(o.k, o.v!);
          } else {
            expect(replay.get(o.k), where).toBe(o.v);
            replay.delete(o.k);
          }
        }
      }
      if (current !== null) await verify(current);
      expect(checked).toBe(10);
    });

    /** An ingest hook that runs one full compaction of `t` (another process's, say) before record `at`. */
    const fullCompactionAt = (t: Table, at: number) => {
      let compacted = false;
      return async (i: number): Promise<void> => {
        if (i !== at || compacted) return;
        compacted = true;
        const r = await compactPrimaryKeyTable(await openTable(t.location, { fileIO: env.wh.io }), { full: true });
        expect(r.snapshotId).not.toBeNull();
      };
    };

    it("a concurrent compaction drops the writers' compaction, the data commits, and the writers compact again", async () => {
      const t = await create({ 'num-sorted-run.compaction-trigger': '4' });
      const ops = workload(150, 20, 4);
      // Checkpoints 1-3 leave three level-0 files per bucket; during checkpoint 4 (records 45..59)
      // a full compaction replaces them, and checkpoint 4's writers, at four sorted runs, compact
      // the replaced files.
      const { infos } = await ingest(t, ops, { before: fullCompactionAt(t, 50) });
      expect(droppedCompactions(infos)).toEqual([4n]);
      // After the drop the writers start from the table (one compacted file per bucket) and
      // compact again once a bucket has four sorted runs, without conflicts.
      const later = infos.filter((i) => i.checkpointId > 4n).map((i) => i.commits[0]!.result);
      expect(later.filter((r) => r.status === 'committed' && r.snapshotIds.length === 2).length).toBeGreaterThan(0);
      expect(later.filter((r) => r.status === 'committed' && r.compactionDropped !== undefined)).toEqual([]);
      for (const { snapshotId, offset } of checkpointSnapshots(infos)) {
        expect(await rowsAt(t, snapshotId), `snapshot ${snapshotId}`).toEqual(model(ops, offset));
      }
    });

    it('deletion vectors: a compaction dropped at the last checkpoint is redone, so batch reads see its rows', async () => {
      const t = await create({ 'deletion-vectors.enabled': 'true' });
      const ops = workload(60, 20, 4);
      // During the last checkpoint (records 45..59) a full compaction replaces the files the
      // writers' compaction takes: it is dropped, and the checkpoint's rows stay in level 0,
      // which batch reads of a deletion-vector table skip.
      const { infos } = await ingest(t, ops, { before: fullCompactionAt(t, 50) });
      expect(droppedCompactions(infos)).toEqual([4n]);
      // One more checkpoint, without records, commits the compaction of those buckets.
      const extra = infos.filter((i) => i.checkpointId > 4n);
      expect(extra.map((i) => i.records)).toEqual([0]);
      const latest = (await t.snapshotManager.latest())!;
      expect(latest).toMatchObject({ commitKind: 'COMPACT', commitIdentifier: 5n });
      expect((await levels(t, latest.id)).get(0) ?? 0).toBe(0);
      expect(await rowsAt(t, latest.id)).toEqual(model(ops, ops.length));
    });

    describe('a stop between the APPEND and the COMPACT snapshot of a checkpoint', () => {
      /**
       * Checkpoint 1 committed; checkpoint 2 (with a compaction) durable in the state and its APPEND
       * snapshot committed, its COMPACT snapshot not: what a SIGKILL at 'before-compact-snapshot'
       * leaves. Returns the table, the state store and the checkpoint-2 committable's compaction outputs.
       */
      async function stoppedBeforeCompact(ops: readonly Op[]) {
        const t = await create({ 'deletion-vectors.enabled': 'true' });
        const store = new FileIOCheckpointStore(env.wh.io, `${t.location}-state`);
        const fingerprint = await tableFingerprint(env.wh.io, t.location);
        // The pipeline's committer (commit user pipe-1, this state store), as a restarted process makes it.
        const committer = (other: Partial<SinkCommitterOptions> = {}): SinkCommitter =>
          new SinkCommitter({
            fileIO: env.wh.io,
            tableLocation: t.location,
            schema: t.schema(),
            table: { location: t.location, fingerprint },
            commitUser: 'pipe-1',
            stateStore: store,
            ...other,
          });
        const c1 = committer();
        const w = new SinkWriter(t, 0, { rowKindField: 'op' });
        await w.write(ops.slice(0, 40));
        c1.add(await w.prepareCommit(1n));
        await c1.snapshotState(1n, { id: 'ops:test', offset: 40, done: false });
        await c1.notifyCheckpointComplete(1n);
        await w.close();
        // A fresh writer, as after a restart: its compaction inputs come from the manifests (byte
        // fields as the storage returns them), and go through the state file below.
        const w2 = new SinkWriter(t, 0, { rowKindField: 'op' });
        await w2.write(ops.slice(40));
        const second = await w2.prepareCommit(2n);
        await w2.close();
        expect(second.messages.some((m) => (m.compactAfter?.length ?? 0) > 0 && (m.compactNewIndexFiles?.length ?? 0) > 0)).toBe(true);
        c1.add(second);
        await c1.snapshotState(2n, { id: 'ops:test', offset: ops.length, done: true });
        // The APPEND part alone, as the committer had written it when the process died.
        const appendOnly: CommitMessage[] = second.messages.map((m) => ({
          partition: m.partition,
          bucket: m.bucket,
          totalBuckets: m.totalBuckets,
          newFiles: m.newFiles,
        }));
        const r = await newTableCommit(t.context, { commitUser: 'pipe-1' }).commit({ identifier: 2n, messages: appendOnly });
        expect(r.status).toBe('committed');
        const outputs = second.messages.flatMap((m) => {
          const before = new Set((m.compactBefore ?? []).map((f) => f.fileName));
          return [
            ...(m.compactAfter ?? [])
              .filter((f) => !before.has(f.fileName))
              .map((f) => t.paths.dataFilePath(m.partition, m.bucket, f.fileName)),
            ...(m.compactNewIndexFiles ?? []).map((f) => t.paths.indexFilePath(f.fileName)),
          ];
        });
        return { t, store, committer, outputs };
      }

      it('the restore commits the compaction once: rows visible, COMPACT under the same identifier', async () => {
        const ops = workload(80, 20, 5);
        const { t, store, committer, outputs } = await stoppedBeforeCompact(ops);
        const appendId = (await t.snapshotManager.latestId())!;
        // Batch reads of a deletion-vector table skip level 0: checkpoint 2 is not visible yet.
        expect(await rowsAt(t, appendId)).toEqual(model(ops, 40));
        const state = (await store.latest())!;
        expect(state.checkpointId).toBe(2n);
        await committer().restore(state);
        const latest = (await t.snapshotManager.latest())!;
        expect(latest).toMatchObject({ id: appendId + 1, commitKind: 'COMPACT', commitUser: 'pipe-1', commitIdentifier: 2n });
        expect(await rowsAt(t, latest.id)).toEqual(model(ops, ops.length));
        expect((await levels(t, latest.id)).get(0) ?? 0).toBe(0);
        for (const p of outputs) expect(await env.wh.io.exists(p), p).toBe(true);
        // A second restore from the same state (a crash right after the first) commits nothing.
        await committer().restore(state);
        expect(await t.snapshotManager.latestId()).toBe(latest.id);
        // And the pipeline goes on from there.
        const more = [...ops, ...workload(30, 20, 6).map((o) => ({ ...o, v: o.v === null ? null : `m${o.v}` }))];
        const { summary: s } = await ingestCollectingCheckpoints({
          table: t.location,
          fileIO: env.wh.io,
          source: arraySource(more, 'ops:test'),
          stateStore: store,
          checkpointEvery: 15,
          rowKindField: 'op',
        });
        expect(s).toMatchObject({ status: 'source-done', restoredFrom: 2n, recoveredCheckpoints: 0, records: 30 });
        expect(await rowsAt(t, (await t.snapshotManager.latestId())!)).toEqual(model(more, more.length));
      });

      it('a COMPACT that lands while the restore completes it (another process of the commit user) is kept once, outputs and all', async () => {
        const ops = workload(80, 20, 8);
        const { t, store, committer, outputs } = await stoppedBeforeCompact(ops);
        const state = (await store.latest())!;
        // The other process finishes the compaction right after this restore looked at the table
        // (at its first check that the compaction's outputs exist).
        let raced = false;
        const io = new Proxy(env.wh.io, {
          get(target, prop) {
            const value = Reflect.get(target, prop) as unknown;
            if (prop !== 'exists' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
            return async (path: string) => {
              if (!raced && outputs.includes(path)) {
                raced = true;
                await committer().restore(state);
              }
              return (value as (p: string) => Promise<boolean>).call(target, path);
            };
          },
        });
        const warnings: string[] = [];
        await committer({ fileIO: io, logger: { warn: (m) => warnings.push(m) } }).restore(state);
        expect(raced).toBe(true);
        const ofTwo: string[] = [];
        for await (const s of t.snapshotManager.iterateForward()) if (s.commitIdentifier === 2n) ofTwo.push(s.commitKind);
        expect(ofTwo).toEqual(['APPEND', 'COMPACT']);
        const latest = (await t.snapshotManager.latest())!;
        expect(latest).toMatchObject({ commitKind: 'COMPACT', commitIdentifier: 2n });
        expect(warnings.join('\n')).toMatch(/compaction of checkpoint 2 .* was not committed: .*already committed/);
        // The outputs are the live files of the COMPACT snapshot: deleting them would lose the data.
        for (const p of outputs) expect(await env.wh.io.exists(p), p).toBe(true);
        expect(await rowsAt(t, latest.id)).toEqual(model(ops, ops.length));
      });

      it('a completion dropped at restore (its outputs gone) leaves level 0, which the pipeline compacts before it ends', async () => {
        const ops = workload(80, 20, 9);
        const { t, store, outputs } = await stoppedBeforeCompact(ops);
        // What a drop at runtime leaves when the process dies before its next checkpoint.
        await env.wh.io.delete(outputs[0]!);
        const { summary: s, infos } = await ingestCollectingCheckpoints({
          table: t.location,
          fileIO: env.wh.io,
          source: arraySource(ops, 'ops:test'),
          stateStore: store,
          checkpointEvery: 15,
          rowKindField: 'op',
        });
        // Nothing left to read from the source, but one checkpoint compacts the level-0 files.
        expect(s).toMatchObject({ restoredFrom: 2n, records: 0 });
        expect(infos.map((i) => i.records)).toEqual([0]);
        const latest = (await t.snapshotManager.latest())!;
        expect(latest.commitKind).toBe('COMPACT');
        expect((await levels(t, latest.id)).get(0) ?? 0).toBe(0);
        expect(await rowsAt(t, latest.id)).toEqual(model(ops, ops.length));
      });

      it('a compaction whose inputs a concurrent compaction replaced is dropped and its outputs deleted', async () => {
        const ops = workload(80, 20, 7);
        const { t, store, committer, outputs } = await stoppedBeforeCompact(ops);
        const full = await compactPrimaryKeyTable(await openTable(t.location, { fileIO: env.wh.io }), { full: true });
        expect(full.snapshotId).not.toBeNull();
        const warnings: string[] = [];
        await committer({ logger: { warn: (m) => warnings.push(m) } }).restore((await store.latest())!);
        expect(await t.snapshotManager.latestId()).toBe(full.snapshotId);
        expect(warnings.join('\n')).toMatch(/dropped the compaction of checkpoint 2/);
        for (const p of outputs) expect(await env.wh.io.exists(p), p).toBe(false);
        expect(await rowsAt(t, full.snapshotId!)).toEqual(model(ops, ops.length));
      });
    });
  });
});
