/**
 * Snapshot order for primary-key commits (commit/sequence-order.ts): new files whose sequence
 * numbers overlap files committed meanwhile to the same bucket are rewritten above them, so the
 * later snapshot wins. Key-value files are written directly in Java's layout here, as two writers
 * that both continued a bucket from the same base would have written them.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import {
  keyValueFileFields,
  readParquetFile,
  serializeBinaryRow,
  serializeSchema,
  toArrowSchema,
  writeParquetFile,
  type DataField,
  type DataFileMeta,
  type DataType,
  type TableSchema,
} from '@tidemark/format';
import { FileStoreCommit } from '../src/commit/file-store-commit.js';
import { liveEntries } from '../src/commit/manifest-fold.js';
import { makeBatch } from '../src/read/arrow-take.js';
import { openTable } from '../src/table.js';
import { TablePaths } from '../src/table-paths.js';
import { SnapshotManager } from '../src/snapshot-manager.js';
import { buildColumn } from '../src/write/arrow-columns.js';
import { dataFile } from './commit-helpers.js';

const K: DataType = { root: 'INT', nullable: false } as DataType;
const S: DataType = { root: 'VARCHAR', nullable: true, length: 2147483647 } as DataType;
const DT: DataType = { root: 'VARCHAR', nullable: false, length: 2147483647 } as DataType;
const FIELDS: DataField[] = [
  { id: 0, name: 'k', type: K },
  { id: 1, name: 'v', type: S },
  { id: 2, name: 'dt', type: DT },
];

let tableNo = 0;

/** Runs `before` (once per armed path) just before a snapshot create, so another commit wins that race. */
class RacingFileIO extends MemoryFileIO {
  before: (() => Promise<void>) | null = null;
  override async createIfAbsent(path: string, data: Uint8Array | string) {
    const hook = /\/snapshot\/snapshot-\d+$/.test(path) ? this.before : null;
    if (hook) {
      this.before = null;
      await hook();
    }
    return super.createIfAbsent(path, data);
  }
}

async function pkTable() {
  const io = new RacingFileIO();
  const root = `memory://seq-order-${process.pid}-${++tableNo}/wh/db.db/t`;
  const paths = new TablePaths(root);
  const schema: TableSchema = {
    version: 3,
    id: 0,
    fields: FIELDS,
    highestFieldId: 2,
    partitionKeys: ['dt'],
    primaryKeys: ['dt', 'k'],
    options: { bucket: '2', 'file.format': 'parquet' },
    timeMillis: 0,
  };
  await io.write(paths.schemaPath(0), serializeSchema(schema));
  return { io, paths, schema, root };
}

type Row = { k: number; v: string; seq: number; kind?: number };

/** Writes one level-0 key-value file of partition `dt`, bucket `bucket`; returns its commit message. */
async function kvFile(t: Awaited<ReturnType<typeof pkTable>>, dt: string, bucket: number, rows: Row[]) {
  const kvFields = keyValueFileFields([FIELDS[0]!], FIELDS);
  const columns = [
    buildColumn(
      K,
      rows.map((r) => r.k),
    ),
    buildColumn(
      { root: 'BIGINT', nullable: false } as DataType,
      rows.map((r) => BigInt(r.seq)),
    ),
    buildColumn(
      { root: 'TINYINT', nullable: false } as DataType,
      rows.map((r) => r.kind ?? 0),
    ),
    buildColumn(
      K,
      rows.map((r) => r.k),
    ),
    buildColumn(
      S,
      rows.map((r) => r.v),
    ),
    buildColumn(
      DT,
      rows.map(() => dt),
    ),
  ];
  const bytes = writeParquetFile([makeBatch(toArrowSchema(kvFields), columns, rows.length)]);
  const name = `data-${randomUUID()}-0.parquet`;
  await t.io.write(t.paths.dataFilePath(`dt=${dt}`, bucket, name), bytes);
  const seqs = rows.map((r) => BigInt(r.seq));
  const file: DataFileMeta = {
    ...dataFile(rows.length, name, 0),
    fileSize: bytes.length,
    minSequenceNumber: seqs.reduce((a, b) => (a < b ? a : b)),
    maxSequenceNumber: seqs.reduce((a, b) => (a > b ? a : b)),
  };
  return { partition: serializeBinaryRow([DT], [dt]), bucket, totalBuckets: 2, newFiles: [file] };
}

async function readAll(t: Awaited<ReturnType<typeof pkTable>>, snapshotId?: number): Promise<Map<string, string>> {
  const table = await openTable(t.root, { fileIO: t.io });
  const data = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  const out = new Map<string, string>();
  for (let i = 0; i < data.numRows; i++) {
    const key = `${data.getChild('dt')!.get(i)}/${data.getChild('k')!.get(i)}`;
    expect(out.has(key)).toBe(false);
    out.set(key, data.getChild('v')!.get(i) as string);
  }
  return out;
}

async function sequenceColumn(t: Awaited<ReturnType<typeof pkTable>>, dt: string, bucket: number, name: string): Promise<bigint[]> {
  const out: bigint[] = [];
  for await (const b of readParquetFile(t.io, t.paths.dataFilePath(`dt=${dt}`, bucket, name))) {
    for (const v of b.getChild('_SEQUENCE_NUMBER')!) out.push(v as bigint);
  }
  return out;
}

describe('primary-key commits keep snapshot order across writers of one bucket', () => {
  it('rewrites new files that overlap a file committed meanwhile, so the later snapshot wins', async () => {
    const t = await pkTable();
    // Both writers continued bucket 0 of dt=a from an empty table (sequence 0).
    const first = await kvFile(t, 'a', 0, [
      { k: 1, v: 'first-old', seq: 0 },
      { k: 2, v: 'first', seq: 1 },
      { k: 1, v: 'first', seq: 5 },
    ]);
    const second = await kvFile(t, 'a', 0, [
      { k: 1, v: 'second', seq: 0 },
      { k: 3, v: 'second', seq: 1 },
    ]);
    const c1 = new FileStoreCommit(t.io, t.paths, t.schema);
    const c2 = new FileStoreCommit(t.io, t.paths, t.schema);
    expect((await c1.commit({ identifier: 1n, messages: [first] }, { commitUser: 'one' })).status).toBe('committed');
    const r = await c2.commit({ identifier: 1n, messages: [second] }, { commitUser: 'two' });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 2, resequencedFiles: 1 });

    // Without the rewrite, key 1 would read 'first' (sequence 5 beats 0) although snapshot 2 wrote it later.
    expect(await readAll(t)).toEqual(
      new Map([
        ['a/1', 'second'],
        ['a/2', 'first'],
        ['a/3', 'second'],
      ]),
    );
    expect(await readAll(t, 1)).toEqual(
      new Map([
        ['a/1', 'first'],
        ['a/2', 'first'],
      ]),
    );

    const latest = (await new SnapshotManager(t.io, t.paths).latest())!;
    const live = [...(await liveEntries(t.io, t.paths, latest)).values()];
    const added = live.find((e) => e.file.fileName !== first.newFiles[0]!.fileName)!;
    expect(added.file.fileName).not.toBe(second.newFiles[0]!.fileName);
    expect(added.file.minSequenceNumber).toBe(6n);
    expect(added.file.maxSequenceNumber).toBe(7n);
    expect(added.file.rowCount).toBe(2);
    expect(await sequenceColumn(t, 'a', 0, added.file.fileName)).toEqual([6n, 7n]);
    // The superseded file is gone; the rewritten one replaced it.
    expect(await t.io.exists(t.paths.dataFilePath('dt=a', 0, second.newFiles[0]!.fileName))).toBe(false);
  });

  it('leaves files alone when nothing overlaps, and rewrites only the overlapping bucket', async () => {
    const t = await pkTable();
    const c = new FileStoreCommit(t.io, t.paths, t.schema);
    await c.commit(
      {
        identifier: 1n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'x', seq: 0 },
            { k: 1, v: 'y', seq: 3 },
          ]),
        ],
      },
      { commitUser: 'u' },
    );
    const inOrder = await kvFile(t, 'a', 0, [{ k: 1, v: 'z', seq: 4 }]);
    const otherBucket = await kvFile(t, 'a', 1, [{ k: 2, v: 'b1', seq: 0 }]);
    const otherPartition = await kvFile(t, 'b', 0, [{ k: 1, v: 'p', seq: 0 }]);
    await c.commit({ identifier: 2n, messages: [inOrder, otherBucket, otherPartition] }, { commitUser: 'u' });
    const names = async () => {
      const latest = (await new SnapshotManager(t.io, t.paths).latest())!;
      return new Set([...(await liveEntries(t.io, t.paths, latest)).values()].map((e) => e.file.fileName));
    };
    let live = await names();
    for (const m of [inOrder, otherBucket, otherPartition]) expect(live.has(m.newFiles[0]!.fileName)).toBe(true);

    // A stale writer of bucket 0 and bucket 1 (both from an empty base): only those two are rewritten.
    const stale0 = await kvFile(t, 'a', 0, [{ k: 1, v: 'stale', seq: 0 }]);
    const fresh = await kvFile(t, 'b', 1, [{ k: 9, v: 'new', seq: 0 }]);
    await c.commit({ identifier: 3n, messages: [stale0, fresh] }, { commitUser: 'u' });
    live = await names();
    expect(live.has(stale0.newFiles[0]!.fileName)).toBe(false);
    expect(live.has(fresh.newFiles[0]!.fileName)).toBe(true);
    expect(await readAll(t)).toEqual(
      new Map([
        ['a/1', 'stale'],
        ['a/2', 'b1'],
        ['b/1', 'p'],
        ['b/9', 'new'],
      ]),
    );
  });

  it('re-sequences again on a retry when the writer that won the race wrote the same bucket', async () => {
    const t = await pkTable();
    const c = new FileStoreCommit(t.io, t.paths, t.schema);
    await c.commit(
      {
        identifier: 1n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'base', seq: 0 },
            { k: 2, v: 'base', seq: 1 },
          ]),
        ],
      },
      { commitUser: 'u' },
    );
    // The loser's first attempt re-sequences above snapshot 1 (to 2); the winner, committed during
    // that attempt, reaches 9, so the retry re-sequences again (to 10) and deletes the first rewrite.
    const stale = await kvFile(t, 'a', 0, [{ k: 1, v: 'loser', seq: 0 }]);
    const winner = await kvFile(t, 'a', 0, [
      { k: 1, v: 'winner', seq: 2 },
      { k: 2, v: 'winner', seq: 3 },
      { k: 1, v: 'winner', seq: 9 },
    ]);
    t.io.before = async () => {
      await new FileStoreCommit(t.io, t.paths, t.schema).commit({ identifier: 1n, messages: [winner] }, { commitUser: 'winner' });
    };
    const r = await new FileStoreCommit(t.io, t.paths, t.schema, { commitOptions: { minRetryWaitMs: 1, maxRetryWaitMs: 2 } }).commit(
      { identifier: 1n, messages: [stale] },
      { commitUser: 'loser' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 3, resequencedFiles: 2 });
    expect(await readAll(t, 2)).toEqual(
      new Map([
        ['a/1', 'winner'],
        ['a/2', 'winner'],
      ]),
    );
    expect(await readAll(t)).toEqual(
      new Map([
        ['a/1', 'loser'],
        ['a/2', 'winner'],
      ]),
    );
    const latest = (await new SnapshotManager(t.io, t.paths).latest())!;
    const live = [...(await liveEntries(t.io, t.paths, latest)).values()].filter((e) => e.file.minSequenceNumber >= 10n);
    expect(live.map((e) => [e.file.minSequenceNumber, e.file.maxSequenceNumber])).toEqual([[10n, 10n]]);
    // Only the committed rewrite is left in the bucket besides the other writers' files.
    const names = [];
    for await (const st of t.io.list(t.paths.bucketDir('dt=a', 0))) names.push(st.path.slice(st.path.lastIndexOf('/') + 1));
    expect(names.sort()).toEqual([...(await liveEntries(t.io, t.paths, latest)).values()].map((e) => e.file.fileName).sort());
  });

  it('reads the table again when the snapshot its cached maxima came from was rolled back and replaced', async () => {
    const t = await pkTable();
    const other = new FileStoreCommit(t.io, t.paths, t.schema);
    await other.commit(
      {
        identifier: 1n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'one', seq: 0 },
            { k: 2, v: 'one', seq: 1 },
          ]),
        ],
      },
      { commitUser: 'o' },
    );
    await other.commit(
      {
        identifier: 2n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 2, v: 'two', seq: 2 },
            { k: 2, v: 'two', seq: 3 },
          ]),
        ],
      },
      { commitUser: 'o' },
    );
    // This committer learns the maxima at snapshot 2 (bucket 0: 3).
    const c = new FileStoreCommit(t.io, t.paths, t.schema);
    await c.commit({ identifier: 1n, messages: [await kvFile(t, 'a', 0, [{ k: 3, v: 'c', seq: 4 }])] }, { commitUser: 'c' });
    await (await openTable(t.root, { fileIO: t.io })).rollbackTo(1);
    // A new snapshot 2 reaches 20 in bucket 0; snapshot 3 writes bucket 1 only.
    await other.commit(
      {
        identifier: 3n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'new-2', seq: 2 },
            { k: 1, v: 'new-2', seq: 20 },
          ]),
        ],
      },
      { commitUser: 'o' },
    );
    await other.commit({ identifier: 4n, messages: [await kvFile(t, 'a', 1, [{ k: 9, v: 'b1', seq: 0 }])] }, { commitUser: 'o' });
    const r = await c.commit({ identifier: 2n, messages: [await kvFile(t, 'a', 0, [{ k: 1, v: 'latest', seq: 4 }])] }, { commitUser: 'c' });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 4, resequencedFiles: 1 });
    expect((await readAll(t)).get('a/1')).toBe('latest');
  });

  it('a delete from a stale writer still removes the key written by an earlier snapshot', async () => {
    const t = await pkTable();
    const c = new FileStoreCommit(t.io, t.paths, t.schema);
    await c.commit(
      {
        identifier: 1n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'x', seq: 0 },
            { k: 1, v: 'y', seq: 1 },
            { k: 1, v: 'z', seq: 2 },
          ]),
        ],
      },
      { commitUser: 'u' },
    );
    const del = await kvFile(t, 'a', 0, [{ k: 1, v: 'z', seq: 0, kind: 3 }]);
    await new FileStoreCommit(t.io, t.paths, t.schema).commit({ identifier: 1n, messages: [del] }, { commitUser: 'other' });
    expect(await readAll(t)).toEqual(new Map());
  });

  it('drops a compaction of a re-sequenced bucket that merged the rewritten files, and deletes its output', async () => {
    const t = await pkTable();
    const c = new FileStoreCommit(t.io, t.paths, t.schema);
    await c.commit(
      {
        identifier: 1n,
        messages: [
          await kvFile(t, 'a', 0, [
            { k: 1, v: 'x', seq: 0 },
            { k: 1, v: 'y', seq: 4 },
          ]),
        ],
      },
      { commitUser: 'u' },
    );
    const ours = await kvFile(t, 'a', 0, [{ k: 1, v: 'ours', seq: 0 }]);
    const compacted = await kvFile(t, 'a', 0, [{ k: 1, v: 'ours', seq: 0 }]);
    const output = { ...compacted.newFiles[0]!, level: 5 };
    const r = await new FileStoreCommit(t.io, t.paths, t.schema).commit(
      { identifier: 1n, messages: [{ ...ours, compactBefore: ours.newFiles, compactAfter: [output] }] },
      { commitUser: 'other' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotIds: [2] });
    expect(await t.io.exists(t.paths.dataFilePath('dt=a', 0, output.fileName))).toBe(false);
    expect(await readAll(t)).toEqual(new Map([['a/1', 'ours']]));
  });

  it('keeps the committed new files when the compaction of the same commit lost to a concurrent one', async () => {
    const t = await pkTable();
    const old = await kvFile(t, 'a', 0, [{ k: 1, v: 'old', seq: 0 }]);
    await new FileStoreCommit(t.io, t.paths, t.schema).commit({ identifier: 1n, messages: [old] }, { commitUser: 'o' });
    // Another writer compacts bucket 0 first.
    const theirs = { ...(await kvFile(t, 'a', 0, [{ k: 1, v: 'old', seq: 0 }])).newFiles[0]!, level: 5 };
    await new FileStoreCommit(t.io, t.paths, t.schema).commit(
      { identifier: 2n, messages: [{ ...old, newFiles: [], compactBefore: old.newFiles, compactAfter: [theirs] }] },
      { commitUser: 'o' },
    );
    // Our commit adds to bucket 1 and compacts bucket 0 from the same, now replaced, input.
    const ours = await kvFile(t, 'a', 1, [{ k: 2, v: 'ours', seq: 0 }]);
    const ourCompaction = { ...(await kvFile(t, 'a', 0, [{ k: 1, v: 'old', seq: 0 }])).newFiles[0]!, level: 5 };
    const warnings: string[] = [];
    const r = await new FileStoreCommit(t.io, t.paths, t.schema, { logger: { warn: (m) => warnings.push(m) } }).commit(
      { identifier: 1n, messages: [ours, { ...old, newFiles: [], compactBefore: old.newFiles, compactAfter: [ourCompaction] }] },
      { commitUser: 'u' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotId: 3, snapshotIds: [3], compactionDropped: expect.any(String) });
    expect(warnings.join('\n')).toContain('dropped the compaction');
    expect(await t.io.exists(t.paths.dataFilePath('dt=a', 1, ours.newFiles[0]!.fileName))).toBe(true);
    expect(await t.io.exists(t.paths.dataFilePath('dt=a', 0, ourCompaction.fileName))).toBe(false);
    expect(await readAll(t)).toEqual(
      new Map([
        ['a/1', 'old'],
        ['a/2', 'ours'],
      ]),
    );
  });

  it('dropping the compaction of a re-sequenced bucket never deletes a file it only moved up a level', async () => {
    const t = await pkTable();
    const old = await kvFile(t, 'a', 0, [
      { k: 1, v: 'old', seq: 0 },
      { k: 1, v: 'old', seq: 3 },
    ]);
    await new FileStoreCommit(t.io, t.paths, t.schema).commit({ identifier: 1n, messages: [old] }, { commitUser: 'o' });
    const ours = await kvFile(t, 'a', 0, [{ k: 2, v: 'ours', seq: 0 }]);
    const upgraded = { ...old.newFiles[0]!, level: 5 };
    const r = await new FileStoreCommit(t.io, t.paths, t.schema).commit(
      { identifier: 1n, messages: [{ ...ours, compactBefore: old.newFiles, compactAfter: [upgraded] }] },
      { commitUser: 'u' },
    );
    expect(r).toMatchObject({ status: 'committed', snapshotIds: [2], resequencedFiles: 1 });
    expect(await t.io.exists(t.paths.dataFilePath('dt=a', 0, old.newFiles[0]!.fileName))).toBe(true);
    expect(await readAll(t)).toEqual(
      new Map([
        ['a/1', 'old'],
        ['a/2', 'ours'],
      ]),
    );
  });
});
