import { describe, expect, it } from 'vitest';
import {
  DataFileLocator,
  DynamicBucketAssigner,
  SnapshotManager,
  TablePaths,
  inflightRecordId,
  listInflightRecords,
  metadataPaths,
  recordInflightFiles,
} from '@tidemark/core';
import { readIndexManifest } from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import {
  DuplicateCommitError,
  FileIOCheckpointStore,
  IdentifierRegressionError,
  MissingDataFileError,
  OFFSETS_PROPERTY,
  SinkCommitter,
  SinkWriter,
  tableFingerprint,
  type CheckpointState,
  type CheckpointStateStore,
} from '../src/index.js';
import { memoryTable, rows, tableIds } from './helpers.js';

interface Ctx {
  io: FileIO;
  location: string;
  schema: TableSchema;
  store: FileIOCheckpointStore;
  fingerprint: string;
}

async function setup(): Promise<Ctx> {
  const t = await memoryTable();
  return { ...t, store: new FileIOCheckpointStore(t.io, `${t.location}-state`), fingerprint: await tableFingerprint(t.io, t.location) };
}

function committer(c: Ctx, user = 'user-a', store: CheckpointStateStore = c.store): SinkCommitter {
  return new SinkCommitter({
    fileIO: c.io,
    tableLocation: c.location,
    schema: c.schema,
    table: { location: c.location, fingerprint: c.fingerprint },
    commitUser: user,
    stateStore: store,
  });
}

/** Writes rows [from, to) with one writer and hands the committable for `id` to `cm`. */
async function prepare(c: Ctx, cm: SinkCommitter, id: bigint, from: number, to: number, writerId = 0): Promise<void> {
  const w = new SinkWriter(c.io, c.location, c.schema, writerId);
  await w.write(rows(from, to));
  cm.add(await w.prepareCommit(id));
}

const src = (offset: number) => ({ id: 'src', offset, done: false });

async function snapshots(c: Ctx) {
  const sm = new SnapshotManager(c.io, new TablePaths(c.location));
  const out = [];
  for await (const s of sm.iterateForward()) out.push(s);
  return out;
}

/** Ids of the sink's checkpoint records (`<commitUser>-<checkpoint>`); TableWrite's own `write-<uuid>` records are not the committer's. */
async function inflightIds(c: Ctx): Promise<string[]> {
  const ids: string[] = [];
  for await (const r of listInflightRecords(c.io, c.location))
    if (/-\d+$/.test(r.id) && !r.id.startsWith('write-') && !r.id.startsWith('commit-')) ids.push(r.id);
  return ids.sort();
}

describe('SinkCommitter', () => {
  it('records in-flight files before the state is stored, commits with identifier = checkpoint id, then clears them', async () => {
    const c = await setup();
    let inflightAtSave: string[] = [];
    const store: CheckpointStateStore = Object.assign(Object.create(c.store) as CheckpointStateStore, {
      save: async (s: CheckpointState) => {
        inflightAtSave = await inflightIds(c);
        await c.store.save(s);
      },
    });
    const cm = committer(c, 'user-a', store);
    await prepare(c, cm, 1n, 0, 10, 0);
    await prepare(c, cm, 1n, 10, 20, 1);
    const state = await cm.snapshotState(1n, src(20));
    expect(inflightAtSave).toEqual([inflightRecordId('user-a', 1n)]);
    expect(state.pending).toHaveLength(2);
    expect(await tableIds(c.io, c.location)).toEqual([]);
    const commits = await cm.notifyCheckpointComplete(1n);
    expect(commits.map((x) => x.result.status)).toEqual(['committed']);
    const snaps = await snapshots(c);
    expect(snaps.map((s) => [s.commitUser, s.commitIdentifier])).toEqual([['user-a', 1n]]);
    expect(JSON.parse(snaps[0]!.properties![OFFSETS_PROPERTY]!)).toMatchObject({ offset: 20 });
    expect(await tableIds(c.io, c.location)).toEqual(rows(0, 20).map((r) => r.id));
    expect(await inflightIds(c)).toEqual([]);
  });

  it('a later notification commits every earlier pending checkpoint in order', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 5);
    await cm.snapshotState(1n, src(5));
    await prepare(c, cm, 2n, 5, 9);
    await cm.snapshotState(2n, src(9));
    await cm.notifyCheckpointComplete(2n);
    expect((await snapshots(c)).map((s) => s.commitIdentifier)).toEqual([1n, 2n]);
    expect(await tableIds(c.io, c.location)).toEqual(rows(0, 9).map((r) => r.id));
  });

  it('restore commits what the table lacks, skips what it has, and is idempotent', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 5);
    await cm.snapshotState(1n, src(5));
    await cm.notifyCheckpointComplete(1n);
    await prepare(c, cm, 2n, 5, 8);
    await cm.snapshotState(2n, src(8));
    await prepare(c, cm, 3n, 8, 12);
    const state = await cm.snapshotState(3n, src(12));
    // crash: checkpoint 2 and 3 durable but not committed; pretend checkpoint 2 was committed before the crash
    expect(state.pending.map((p) => p.checkpointId)).toEqual([2n, 3n]);
    await cm.notifyCheckpointComplete(2n);
    const restored = committer(c);
    const r = await restored.restore((await c.store.latest())!);
    expect(r.map((x) => [x.checkpointId, x.result.status])).toEqual([[3n, 'committed']]);
    expect((await snapshots(c)).map((s) => s.commitIdentifier)).toEqual([1n, 2n, 3n]);
    const again = await committer(c).restore((await c.store.latest())!);
    expect(again).toEqual([]);
    expect((await snapshots(c)).length).toBe(3);
    expect(await tableIds(c.io, c.location)).toEqual(rows(0, 12).map((r) => r.id));
  });

  it('restore releases stale in-flight records of checkpoints whose state never became durable', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 3);
    await cm.snapshotState(1n, src(3));
    await recordInflightFiles(c.io, c.location, inflightRecordId('user-a', 2n), ['bucket-0/data-x.parquet']);
    await recordInflightFiles(c.io, c.location, inflightRecordId('other-user', 7n), ['bucket-0/data-y.parquet']);
    await committer(c).restore((await c.store.latest())!);
    expect(await inflightIds(c)).toEqual([inflightRecordId('other-user', 7n)]);
  });

  it('refuses a state older than the table (identifiers of the commit user would go backwards)', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 3);
    const old = await cm.snapshotState(1n, src(3));
    await cm.notifyCheckpointComplete(1n);
    await prepare(c, cm, 2n, 3, 6);
    await cm.snapshotState(2n, src(6));
    await cm.notifyCheckpointComplete(2n);
    await expect(committer(c).restore(old)).rejects.toThrow(IdentifierRegressionError);
    await expect(committer(c).restore(old)).rejects.toThrow(/identifier 2, newer than the latest checkpoint state 1/);
  });

  it('refuses to commit when another pipeline already committed a newer identifier with the same commit user', async () => {
    const c = await setup();
    const a = committer(c, 'shared');
    await prepare(c, a, 5n, 0, 3);
    await a.snapshotState(5n, src(3));
    await a.notifyCheckpointComplete(5n);
    const b = committer(c, 'shared', new FileIOCheckpointStore(c.io, `${c.location}-state-b`));
    await prepare(c, b, 2n, 10, 12);
    await b.snapshotState(2n, src(12));
    await expect(b.notifyCheckpointComplete(2n)).rejects.toThrow(IdentifierRegressionError);
  });

  it('fails loudly when a pending data file is missing', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 3);
    const state = await cm.snapshotState(1n, src(3));
    const file = state.pending[0]!.messages[0]!.newFiles[0]!.fileName;
    await c.io.delete(`${c.location}/bucket-0/${file}`);
    const err = await committer(c)
      .restore(state)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingDataFileError);
    expect((err as MissingDataFileError).files[0]).toContain(file);
    expect(await tableIds(c.io, c.location)).toEqual([]);
  });

  it('refuses to commit the same files twice', async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 3);
    const state = await cm.snapshotState(1n, src(3));
    await cm.notifyCheckpointComplete(1n);
    // a committable for an already committed checkpoint
    const w = new SinkWriter(c.io, c.location, c.schema, 0);
    await w.write(rows(3, 4));
    const late = await w.prepareCommit(1n);
    expect(() => cm.add(late)).toThrow(DuplicateCommitError);
    // checkpoint 1's files relabelled as a later checkpoint of another state
    const forged: CheckpointState = { ...state, checkpointId: 9n, pending: state.pending.map((p) => ({ ...p, checkpointId: 9n })) };
    await expect(committer(c).restore(forged)).rejects.toThrow(DuplicateCommitError);
    expect(await tableIds(c.io, c.location)).toEqual([0, 1, 2]);
  });

  it('treats the hash index files of a committable like its data files: in flight, checked on restore, committed', async () => {
    const c = await setup();
    const cm = committer(c);
    const w = new SinkWriter(c.io, c.location, c.schema, 0);
    await w.write(rows(0, 3));
    const prepared = await w.prepareCommit(1n);
    const assigner = new DynamicBucketAssigner(c.io, metadataPaths(c.location), null, { targetRowNum: 10 });
    const partition = prepared.messages[0]!.partition;
    for (const h of [1, 2, 3]) await assigner.assign(partition, h);
    const withIndex = { ...prepared, messages: await assigner.prepareCommit(prepared.messages) };
    const indexFile = withIndex.messages[0]!.newIndexFiles![0]!.fileName;
    cm.add(withIndex);
    const state = await cm.snapshotState(1n, src(3));
    const records: string[] = [];
    for await (const r of listInflightRecords(c.io, c.location))
      if (r.id === inflightRecordId('user-a', 1n)) records.push(...r.record.files);
    expect(records).toContain(`index/${indexFile}`);

    await c.io.delete(`${c.location}/index/${indexFile}`);
    const err = await committer(c)
      .restore(state)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingDataFileError);
    expect((err as MissingDataFileError).files[0]).toContain(indexFile);
    expect(await tableIds(c.io, c.location)).toEqual([]);

    await c.io.write(`${c.location}/index/${indexFile}`, new Uint8Array([0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]));
    await committer(c).restore(state);
    const latest = (await snapshots(c)).at(-1)!;
    const entries = await readIndexManifest(c.io, `${c.location}/manifest/${latest.indexManifest}`);
    expect(entries.map((e) => [e.indexType, e.fileName, e.rowCount])).toEqual([['HASH', indexFile, 3]]);
  });

  it("a dropped checkpoint's compaction outputs are deleted, a file compaction only moved (live) is not", async () => {
    const c = await setup();
    const cm = committer(c);
    await prepare(c, cm, 1n, 0, 3);
    const state1 = await cm.snapshotState(1n, src(3));
    await cm.notifyCheckpointComplete(1n);
    const live = state1.pending[0]!.messages[0]!;
    const a = live.newFiles[0]!;
    // Checkpoint 2: a new file, and a compaction that moved `a` up and wrote `merged`.
    const w = new SinkWriter(c.io, c.location, c.schema, 0);
    await w.write(rows(3, 5));
    const second = await w.prepareCommit(2n);
    const b = second.messages[0]!.newFiles[0]!;
    const locator = new DataFileLocator(new TablePaths(c.location), c.schema);
    const merged = { ...b, fileName: `${b.fileName.replace(/\.parquet$/, '')}-merged.parquet`, level: 1 };
    await c.io.write(
      locator.fileLocation(live.partition, live.bucket, merged),
      await c.io.read(locator.fileLocation(live.partition, live.bucket, b)),
    );
    const withCompaction = {
      ...second,
      messages: [{ ...second.messages[0]!, compactBefore: [a], compactAfter: [{ ...a, level: 5 }, merged] }],
    };
    const state2: CheckpointState = { ...state1, checkpointId: 2n, pending: [withCompaction] };
    // `a` is live (checkpoint 1), listed in compactAfter only because it changed level.
    const deleted = await committer(c).discardUncommitted(state2, 1n);
    expect(deleted).toBe(2);
    const at = (f: typeof a) => c.io.exists(locator.fileLocation(live.partition, live.bucket, f));
    expect(await at(a)).toBe(true);
    expect(await at(b)).toBe(false);
    expect(await at(merged)).toBe(false);
    expect(await tableIds(c.io, c.location)).toEqual([0, 1, 2]);
  });
});
