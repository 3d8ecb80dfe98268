import { APPENDIX_A_MANIFEST, APPENDIX_A_MANIFEST_LIST } from '../../format/test/appendix-a.js';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type CreateResult, type FileIO } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER, deserializeBinaryRow, readAvroHeader, readManifestEntries, readManifestList } from '@tidemark/format';
import { FileStoreCommit } from '../src/commit/file-store-commit.js';
import { CommitConflictError, CommitInputError } from '../src/commit/commit-errors.js';
import { dataManifests } from '../src/commit/manifest-fold.js';
import { createTestTable, dataFile, liveFileNames, liveRowCount, message, type TestTable } from './commit-helpers.js';

const FAST = { commitOptions: { minRetryWaitMs: 1, maxRetryWaitMs: 5 } };

/** Every file in manifest/ must be referenced by some snapshot (no leftovers of failed attempts). */
async function unreferencedManifestFiles(t: TestTable): Promise<string[]> {
  const used = new Set<string>();
  for await (const s of t.snapshots.iterateForward()) {
    used.add(s.baseManifestList);
    used.add(s.deltaManifestList);
    for (const m of await dataManifests(t.io, t.paths, s)) used.add(m.fileName);
  }
  const out: string[] = [];
  for await (const st of t.io.list(t.paths.manifestDir)) {
    const name = st.path.slice(st.path.lastIndexOf('/') + 1);
    if (!used.has(name)) out.push(name);
  }
  return out;
}

describe('FileStoreCommit: appends', () => {
  it('creates contiguous APPEND snapshots with Paimon snapshot fields and record counts', async () => {
    const t = await createTestTable();
    const r1 = await t.commit.commit(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [dataFile(10)] })] },
      { commitUser: 'u1' },
    );
    const r2 = await t.commit.commit(
      {
        identifier: BATCH_COMMIT_IDENTIFIER,
        messages: [message('a', { newFiles: [dataFile(5)] }), message('b', { newFiles: [dataFile(7)] })],
      },
      { commitUser: 'u2' },
    );
    expect(r1).toMatchObject({ status: 'committed', snapshotId: 1 });
    expect(r2).toMatchObject({ status: 'committed', snapshotId: 2 });
    expect(await t.snapshots.sortedIds()).toEqual([1, 2]);
    const s2 = await t.snapshots.snapshot(2);
    expect(s2).toMatchObject({
      version: 3,
      id: 2,
      schemaId: 0,
      commitUser: 'u2',
      commitKind: 'APPEND',
      totalRecordCount: 22,
      deltaRecordCount: 12,
      nextRowId: 0,
    });
    expect(s2.commitIdentifier).toBe(BATCH_COMMIT_IDENTIFIER);
    expect(s2.baseManifestListSize).toBe((await t.io.stat(t.paths.manifestPath(s2.baseManifestList))).size);
    expect(s2.deltaManifestListSize).toBe((await t.io.stat(t.paths.manifestPath(s2.deltaManifestList))).size);
    const raw = new TextDecoder().decode(await t.io.read(t.paths.snapshotPath(2)));
    expect(raw).not.toContain('logOffsets');
    expect(raw).not.toContain('changelogManifestList');
    expect(raw).toContain('"commitIdentifier" : 9223372036854775807');
    expect(new TextDecoder().decode(await t.io.read(t.paths.latestHint))).toBe('2');
    // First snapshot: empty base list, as Java writes it.
    const s1 = await t.snapshots.snapshot(1);
    expect(await readManifestList(t.io, t.paths.manifestPath(s1.baseManifestList))).toEqual([]);
    expect(await liveRowCount(t)).toBe(22);
    expect((await liveFileNames(t)).length).toBe(3);
  });

  it('writes manifest entries and ManifestFileMeta summaries (sources, partition stats, ranges)', async () => {
    const t = await createTestTable();
    const f1 = dataFile(3);
    const f2 = dataFile(4);
    await t.commit.commit(
      {
        identifier: 1n,
        messages: [
          { ...message('2024-01-02', { newFiles: [f1] }), bucket: 3 },
          message('2024-01-01', { newFiles: [f2] }),
          message(null, { newFiles: [dataFile(1)] }),
        ],
      },
      { commitUser: 'u' },
    );
    const s = await t.snapshots.snapshot(1);
    const [meta, ...rest] = await readManifestList(t.io, t.paths.manifestPath(s.deltaManifestList));
    expect(rest).toEqual([]);
    expect(meta).toMatchObject({
      numAddedFiles: 3,
      numDeletedFiles: 0,
      schemaId: 0,
      minBucket: 0,
      maxBucket: 3,
      minLevel: 0,
      maxLevel: 0,
      minRowId: null,
      maxRowId: null,
    });
    const types = t.schema.fields.filter((f) => f.name === 'dt').map((f) => f.type);
    expect(deserializeBinaryRow(meta!.partitionStats.minValues, types)).toEqual(['2024-01-01']);
    expect(deserializeBinaryRow(meta!.partitionStats.maxValues, types)).toEqual(['2024-01-02']);
    expect(meta!.partitionStats.nullCounts).toEqual([1]);
    expect(meta!.fileSize).toBe((await t.io.stat(t.paths.manifestPath(meta!.fileName))).size);
    const entries = [];
    for await (const e of readManifestEntries(t.io, t.paths.manifestPath(meta!.fileName))) entries.push(e);
    expect(entries.map((e) => [e.kind, e.file.fileSource, e.file.fileName])).toEqual([
      ['ADD', 0, f1.fileName],
      ['ADD', 0, f2.fileName],
      ['ADD', 0, entries[2]!.file.fileName],
    ]);
    expect(meta!.fileName).toMatch(/^manifest-[0-9a-f-]{36}-\d+$/);
    expect(s.deltaManifestList).toMatch(/^manifest-list-[0-9a-f-]{36}-\d+$/);
  });

  it('writes manifests and manifest lists with exactly the Appendix A writer schemas', async () => {
    const t = await createTestTable();
    await t.commit.commit({ identifier: 1n, messages: [message('x', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' });
    const s = await t.snapshots.snapshot(1);
    const [meta] = await readManifestList(t.io, t.paths.manifestPath(s.deltaManifestList));
    const manifestHeader = await readAvroHeader(await t.io.read(t.paths.manifestPath(meta!.fileName)), { path: 'manifest' });
    const listHeader = await readAvroHeader(await t.io.read(t.paths.manifestPath(s.deltaManifestList)), { path: 'list' });
    expect(manifestHeader.schemaText).toBe(APPENDIX_A_MANIFEST);
    expect(listHeader.schemaText).toBe(APPENDIX_A_MANIFEST_LIST);
    expect(manifestHeader.codec).toBe('zstandard');
  });

  it('skips an empty commit unless forced', async () => {
    const t = await createTestTable();
    expect(await t.commit.commit({ identifier: 1n, messages: [] }, { commitUser: 'u' })).toEqual({ status: 'empty' });
    expect(await t.snapshots.latestId()).toBeNull();
    const r = await t.commit.commit(
      { identifier: 2n, messages: [], watermark: 42n, properties: { offset: '7' } },
      { commitUser: 'u', force: true },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 1 });
    const s = await t.snapshots.snapshot(1);
    expect(s).toMatchObject({ totalRecordCount: 0, deltaRecordCount: 0, watermark: 42n, properties: { offset: '7' } });
    expect(await readManifestList(t.io, t.paths.manifestPath(s.deltaManifestList))).toEqual([]);
  });

  it('commits compaction changes as a second COMPACT snapshot with the same identifier', async () => {
    const t = await createTestTable();
    const a = dataFile(2);
    const b = dataFile(3);
    await t.commit.commit({ identifier: 1n, messages: [message('p', { newFiles: [a, b] })] }, { commitUser: 'u' });
    const merged = dataFile(5);
    const c = dataFile(1);
    const r = await t.commit.commit(
      { identifier: 2n, messages: [message('p', { newFiles: [c], compactBefore: [a, b], compactAfter: [merged] })] },
      { commitUser: 'u' },
    );
    expect(r).toEqual({ status: 'committed', snapshotId: 3, snapshotIds: [2, 3] });
    const s2 = await t.snapshots.snapshot(2);
    const s3 = await t.snapshots.snapshot(3);
    expect([s2.commitKind, s3.commitKind]).toEqual(['APPEND', 'COMPACT']);
    expect(s3.commitIdentifier).toBe(2n);
    expect(s3).toMatchObject({ totalRecordCount: 6, deltaRecordCount: 0 });
    expect(await liveFileNames(t)).toEqual([c.fileName, merged.fileName].sort());
    const [meta] = await readManifestList(t.io, t.paths.manifestPath(s3.deltaManifestList));
    expect(meta).toMatchObject({ numAddedFiles: 1, numDeletedFiles: 2 });
    const sources = [];
    for await (const e of readManifestEntries(t.io, t.paths.manifestPath(meta!.fileName))) sources.push([e.kind, e.file.fileSource]);
    expect(sources).toContainEqual(['ADD', 1]);
  });
});

describe('FileStoreCommit: idempotency', () => {
  it('skips identifiers the commit user already committed and filters recovery batches', async () => {
    const t = await createTestTable();
    const first = await t.commit.commit(
      { identifier: 5n, messages: [message('a', { newFiles: [dataFile(1)] })] },
      { commitUser: 'stream' },
    );
    expect(first.status).toBe('committed');
    // Another user's commits in between must not hide the first user's identifier.
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'other' });
    // A fresh instance (a restarted process) must find it by scanning snapshots.
    const restarted = new FileStoreCommit(t.io, t.paths, t.schema);
    const again = await restarted.commit(
      { identifier: 5n, messages: [message('a', { newFiles: [dataFile(1)] })] },
      { commitUser: 'stream' },
    );
    expect(again.status).toBe('skipped');
    expect(
      (await restarted.commit({ identifier: 4n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'stream' })).status,
    ).toBe('skipped');
    expect(await t.snapshots.latestId()).toBe(2);

    const batch = [5n, 6n, 7n].map((identifier) => ({ identifier, messages: [message('a', { newFiles: [dataFile(1)] })] }));
    expect((await restarted.filterCommitted(batch, 'stream')).map((c) => c.identifier)).toEqual([6n, 7n]);
    const results = await restarted.filterAndCommit(batch, 'stream');
    expect(results.map((r) => r.status)).toEqual(['skipped', 'committed', 'committed']);
    expect(await t.snapshots.latestId()).toBe(4);
    // Recovery run again: nothing left to commit.
    expect((await new FileStoreCommit(t.io, t.paths, t.schema).filterAndCommit(batch, 'stream')).map((r) => r.status)).toEqual([
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(await t.snapshots.latestId()).toBe(4);
    expect(await liveRowCount(t)).toBe(4);
  });

  it('completesCompaction: commits the compaction of the last identifier once, never one with new files, an older or an uncommitted identifier', async () => {
    const t = await createTestTable();
    const a = dataFile(3);
    const b = dataFile(4);
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [a] })] }, { commitUser: 'sink' });
    // Identifier 2's APPEND snapshot landed; its COMPACT snapshot did not (the committer stopped).
    await t.commit.commit({ identifier: 2n, messages: [message('a', { newFiles: [b] })] }, { commitUser: 'sink' });
    const merged = dataFile(7, undefined, 5);
    const compaction = { identifier: 2n, messages: [message('a', { compactBefore: [a, b], compactAfter: [merged] })] };
    const restarted = new FileStoreCommit(t.io, t.paths, t.schema);
    expect((await restarted.commit(compaction, { commitUser: 'sink' })).status).toBe('skipped');
    // New files under a taken identifier stay refused, completesCompaction or not: as a misuse.
    const withData = {
      identifier: 2n,
      messages: [message('a', { newFiles: [dataFile(1)], compactBefore: [a, b], compactAfter: [merged] })],
    };
    await expect(restarted.commit(withData, { commitUser: 'sink', completesCompaction: true })).rejects.toThrow(
      /completesCompaction: .* identifier 2: the committable carries more than a compaction/,
    );
    // An identifier the user has not committed: its compaction alone would take the identifier,
    // and the commit of its data would then be skipped as already committed.
    const ahead = { identifier: 9n, messages: [message('a', { compactBefore: [a, b], compactAfter: [merged] })] };
    await expect(restarted.commit(ahead, { commitUser: 'sink', completesCompaction: true })).rejects.toThrow(CommitInputError);
    await expect(restarted.commit(ahead, { commitUser: 'sink', completesCompaction: true })).rejects.toThrow(
      /commit user 'sink' has not committed it yet \(newest: 2\)/,
    );
    expect(await t.snapshots.latestId()).toBe(2);
    const r = await restarted.commit(compaction, { commitUser: 'sink', completesCompaction: true });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 3, snapshotIds: [3] });
    expect(await t.snapshots.snapshot(3)).toMatchObject({ commitKind: 'COMPACT', commitIdentifier: 2n, commitUser: 'sink' });
    expect(await liveFileNames(t)).toEqual([merged.fileName]);
    // Twice (from this committer, or a fresh one that must find the COMPACT snapshot): skipped,
    // naming the identifier as committed, and nothing changes.
    for (const c of [restarted, new FileStoreCommit(t.io, t.paths, t.schema)]) {
      const again = await c.commit(compaction, { commitUser: 'sink', completesCompaction: true });
      expect(again).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/identifier 2 .* already committed/) });
    }
    expect(await t.snapshots.latestId()).toBe(3);
    // After a later identifier, an older one is skipped.
    await restarted.commit({ identifier: 3n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'sink' });
    const late = { identifier: 2n, messages: [message('a', { compactBefore: [merged], compactAfter: [dataFile(7, undefined, 5)] })] };
    expect((await restarted.commit(late, { commitUser: 'sink', completesCompaction: true })).status).toBe('skipped');
    expect(await t.snapshots.latestId()).toBe(4);
  });

  it('rejects duplicate identifiers in one recovery batch', async () => {
    const t = await createTestTable();
    const c = { identifier: 3n, messages: [] };
    await expect(t.commit.filterCommitted([c, { ...c }], 'u')).rejects.toThrow(/strictly increasing/);
  });
});

/** Runs `beforeCreate` once, right before the first snapshot create of the wrapped FileIO. */
class RaceFileIO extends MemoryFileIO {
  creates = 0;
  constructor(private readonly beforeCreate: (path: string) => Promise<void>) {
    super();
  }
  override async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
    if (path.includes('/snapshot/snapshot-') && this.creates++ === 0) await this.beforeCreate(path);
    return super.createIfAbsent(path, data);
  }
}

describe('FileStoreCommit: races and failures', () => {
  it('rebases onto a concurrent commit after losing the snapshot race', async () => {
    let other: TestTable | undefined;
    const winner = dataFile(4);
    const io = new RaceFileIO(async () => {
      await other!.commit.commit(
        { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [winner] })] },
        { commitUser: 'winner' },
      );
    });
    const t = await createTestTable({ io, commit: FAST });
    other = { ...t, commit: new FileStoreCommit(new MemoryFileIO(), t.paths, t.schema) };
    const mine = dataFile(6);
    const r = await t.commit.commit(
      { identifier: BATCH_COMMIT_IDENTIFIER, messages: [message('a', { newFiles: [mine] })] },
      { commitUser: 'loser' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 2 });
    expect((await t.snapshots.snapshot(1)).commitUser).toBe('winner');
    expect(await t.snapshots.snapshot(2)).toMatchObject({ commitUser: 'loser', totalRecordCount: 10, deltaRecordCount: 6 });
    expect(await liveFileNames(t)).toEqual([winner.fileName, mine.fileName].sort());
    expect(await unreferencedManifestFiles(t)).toEqual([]);
  });

  it('fails a deletion conflict with CommitConflictError and leaves the table unchanged', async () => {
    const t = await createTestTable({ commit: FAST });
    const f = dataFile(10);
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [f] })] }, { commitUser: 'w' });
    const c1 = new FileStoreCommit(t.io, t.paths, t.schema);
    const c2 = new FileStoreCommit(t.io, t.paths, t.schema);
    const out1 = dataFile(10);
    const out2 = dataFile(10);
    await c1.commit(
      { identifier: 1n, messages: [message('a', { compactBefore: [f], compactAfter: [out1] })] },
      { commitUser: 'compactor-1' },
    );
    const before = await t.snapshots.latestId();
    const manifestsBefore = await unreferencedManifestFiles(t);
    const err = await c2
      .commit({ identifier: 1n, messages: [message('a', { compactBefore: [f], compactAfter: [out2] })] }, { commitUser: 'compactor-2' })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('CommitConflictError');
    expect((err as Error).message).toContain(f.fileName);
    expect(await t.snapshots.latestId()).toBe(before);
    expect(await liveFileNames(t)).toEqual([out1.fileName]);
    expect(manifestsBefore).toEqual([]);
    expect(await unreferencedManifestFiles(t)).toEqual([]);
  });

  it('refuses a commit whose compactions delete the same live file twice, and leaves the table unchanged', async () => {
    const t = await createTestTable({ commit: FAST });
    const f = dataFile(10);
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [f] })] }, { commitUser: 'w' });
    const before = await t.snapshots.latestId();
    // Two writers that share a bucket each compacted the same input in one checkpoint.
    const twice = {
      identifier: 2n,
      messages: [
        message('a', { compactBefore: [f], compactAfter: [dataFile(10)] }),
        message('a', { compactBefore: [f], compactAfter: [dataFile(10)] }),
      ],
    };
    const err = await t.commit.commit(twice, { commitUser: 'w' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommitConflictError);
    expect((err as Error).message).toMatch(/deletes the same files more than once/);
    expect((err as Error).message).toContain(f.fileName);
    expect(await t.snapshots.latestId()).toBe(before);
    expect(await liveFileNames(t)).toEqual([f.fileName]);
    expect(await unreferencedManifestFiles(t)).toEqual([]);
  });

  it('drops a writer compaction that lost to a concurrent one after its APPEND landed, instead of failing the commit', async () => {
    const t = await createTestTable({ commit: FAST });
    const f = dataFile(10);
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [f] })] }, { commitUser: 'w' });
    const out1 = dataFile(10);
    await new FileStoreCommit(t.io, t.paths, t.schema).commit(
      { identifier: 1n, messages: [message('a', { compactBefore: [f], compactAfter: [out1] })] },
      { commitUser: 'compactor' },
    );
    // A writer's new file plus its own (now stale) compaction of f.
    const mine = dataFile(3);
    const out2 = dataFile(10);
    const out2Path = t.paths.dataFilePath('dt=a/', 0, out2.fileName);
    await t.io.write(out2Path, 'compaction output');
    const warnings: string[] = [];
    const c = new FileStoreCommit(t.io, t.paths, t.schema, { ...FAST, logger: { warn: (m) => warnings.push(m) } });
    const r = await c.commit(
      { identifier: 1n, messages: [message('a', { newFiles: [mine], compactBefore: [f], compactAfter: [out2] })] },
      { commitUser: 'writer' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 3, snapshotIds: [3], compactionDropped: expect.any(String) });
    expect(await liveFileNames(t)).toEqual([out1.fileName, mine.fileName].sort());
    expect(await t.io.exists(out2Path)).toBe(false);
    expect(warnings.join('\n')).toContain('dropped the compaction of commit 1 after snapshot 3');
  });

  it('leaves the table unchanged when the process dies before the snapshot exists', async () => {
    class CrashingFileIO extends MemoryFileIO {
      crash = false;
      override async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
        if (this.crash && path.includes('/snapshot/snapshot-')) throw new Error('simulated crash before the snapshot create');
        return super.createIfAbsent(path, data);
      }
    }
    const io = new CrashingFileIO();
    const t = await createTestTable({ io, commit: { commitOptions: { maxRetries: 2, minRetryWaitMs: 1, maxRetryWaitMs: 2 } } });
    await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [dataFile(3)] })] }, { commitUser: 'u' });
    io.crash = true;
    await expect(
      t.commit.commit({ identifier: 2n, messages: [message('a', { newFiles: [dataFile(4)] })] }, { commitUser: 'u' }),
    ).rejects.toThrow(/simulated crash/);
    // Manifests were written (kept: the outcome was unknown), yet the table is unchanged.
    expect(await t.snapshots.latestId()).toBe(1);
    expect(await liveRowCount(t)).toBe(3);
    const fresh = await createTestTable({ io: new MemoryFileIO(), root: t.paths.root });
    expect(await fresh.snapshots.latestId()).toBe(1);
    io.crash = false;
    // The same identifier can be committed afterwards (it never became visible).
    const r = await t.commit.commit({ identifier: 2n, messages: [message('a', { newFiles: [dataFile(4)] })] }, { commitUser: 'u' });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 2 });
  });

  it('finds the true latest snapshot with a stale, missing or garbage LATEST hint', async () => {
    const t = await createTestTable();
    for (let i = 1; i <= 3; i++)
      await t.commit.commit({ identifier: BigInt(i), messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' });
    await t.io.write(t.paths.latestHint, '1');
    expect(
      await t.commit.commit({ identifier: 4n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' }),
    ).toMatchObject({ snapshotId: 4 });
    await t.io.delete(t.paths.latestHint);
    expect(
      await t.commit.commit({ identifier: 5n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' }),
    ).toMatchObject({ snapshotId: 5 });
    await t.io.write(t.paths.latestHint, 'garbage');
    expect(
      await t.commit.commit({ identifier: 6n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' }),
    ).toMatchObject({ snapshotId: 6 });
    expect(await t.snapshots.sortedIds()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await liveRowCount(t)).toBe(6);
  });

  it('never fails a commit because the LATEST hint cannot be written', async () => {
    class NoHintFileIO extends MemoryFileIO {
      override async write(path: string, data: Uint8Array | string): Promise<void> {
        if (path.endsWith('/snapshot/LATEST') || path.endsWith('/snapshot/EARLIEST')) throw new Error('hint write refused');
        return super.write(path, data);
      }
    }
    const warnings: string[] = [];
    const t = await createTestTable({ io: new NoHintFileIO(), commit: { logger: { warn: (m) => warnings.push(m) } } });
    const r = await t.commit.commit({ identifier: 1n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 1 });
    expect(warnings.join('\n')).toMatch(/LATEST hint/);
  });

  it('gives up with CommitRetryExhaustedError after commit.max-retries lost races, cleaning its manifests', async () => {
    class AlwaysLosingFileIO extends MemoryFileIO {
      override async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
        if (path.includes('/snapshot/snapshot-')) return 'already-exists';
        return super.createIfAbsent(path, data);
      }
    }
    const io: FileIO = new AlwaysLosingFileIO();
    const t = await createTestTable({ io, commit: { commitOptions: { maxRetries: 3, minRetryWaitMs: 1, maxRetryWaitMs: 2 } } });
    const err = await t.commit
      .commit({ identifier: 1n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('CommitRetryExhaustedError');
    expect((err as Error).message).toMatch(/4 attempts/);
    const left: string[] = [];
    for await (const st of io.list(t.paths.manifestDir)) left.push(st.path);
    expect(left).toEqual([]);
  });
});
