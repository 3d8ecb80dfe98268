import { randomUUID } from 'node:crypto';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import {
  EMPTY_SIMPLE_STATS,
  serializeBinaryRow,
  serializeSchema,
  type DataFileMeta,
  type DataType,
  type TableSchema,
} from '@tidemark/format';
import type { CommitMessage } from '../src/commit-message.js';
import { TablePaths } from '../src/table-paths.js';
import { FileStoreCommit, type FileStoreCommitOptions } from '../src/commit/file-store-commit.js';
import { liveEntries } from '../src/commit/manifest-fold.js';
import { SnapshotManager } from '../src/snapshot-manager.js';

const STRING: DataType = { root: 'VARCHAR', nullable: true, length: 2147483647 } as DataType;
const INT: DataType = { root: 'INT', nullable: true } as DataType;

let n = 0;
export function memoryTableRoot(): string {
  n++;
  return `memory://commit-test-${process.pid}-${n}/wh/db.db/t`;
}

/** Append table `id INT, v STRING, dt STRING`, partitioned by dt when `partitioned`. */
export function testSchema(partitioned: boolean, options: Record<string, string> = {}): TableSchema {
  return {
    version: 3,
    id: 0,
    fields: [
      { id: 0, name: 'id', type: INT },
      { id: 1, name: 'v', type: STRING },
      { id: 2, name: 'dt', type: STRING },
    ],
    highestFieldId: 2,
    partitionKeys: partitioned ? ['dt'] : [],
    primaryKeys: [],
    options: { bucket: '-1', 'file.format': 'parquet', ...options },
    timeMillis: 0,
  };
}

export interface TestTable {
  io: FileIO;
  paths: TablePaths;
  schema: TableSchema;
  commit: FileStoreCommit;
  snapshots: SnapshotManager;
}

export async function createTestTable(
  opts: { partitioned?: boolean; options?: Record<string, string>; io?: FileIO; root?: string; commit?: FileStoreCommitOptions } = {},
): Promise<TestTable> {
  const io = opts.io ?? new MemoryFileIO();
  const paths = new TablePaths(opts.root ?? memoryTableRoot());
  const schema = testSchema(opts.partitioned ?? true, opts.options);
  await io.write(paths.schemaPath(0), serializeSchema(schema));
  return { io, paths, schema, commit: new FileStoreCommit(io, paths, schema, opts.commit), snapshots: new SnapshotManager(io, paths) };
}

export function partitionBytes(dt: string | null): Uint8Array {
  return serializeBinaryRow([STRING], [dt]);
}

export const UNPARTITIONED = serializeBinaryRow([], []);

/** A data file record as a writer would report it (no file needs to exist). */
export function dataFile(rowCount: number, name = `data-${randomUUID()}-0.parquet`, level = 0): DataFileMeta {
  return {
    fileName: name,
    fileSize: 1000 + rowCount,
    rowCount,
    minKey: EMPTY_SIMPLE_STATS.minValues,
    maxKey: EMPTY_SIMPLE_STATS.maxValues,
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: EMPTY_SIMPLE_STATS,
    minSequenceNumber: 0n,
    maxSequenceNumber: BigInt(Math.max(0, rowCount - 1)),
    schemaId: 0,
    level,
    extraFiles: [],
    creationTime: Date.now(),
    deleteRowCount: 0,
    embeddedIndex: null,
    fileSource: null,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
  };
}

export function message(
  dt: string | null | undefined,
  files: Partial<Omit<CommitMessage, 'partition' | 'bucket' | 'totalBuckets'>>,
): CommitMessage {
  return {
    partition: dt === undefined ? UNPARTITIONED : partitionBytes(dt),
    bucket: 0,
    totalBuckets: -1,
    newFiles: files.newFiles ?? [],
    ...(files.deletedFiles ? { deletedFiles: files.deletedFiles } : {}),
    ...(files.compactBefore ? { compactBefore: files.compactBefore } : {}),
    ...(files.compactAfter ? { compactAfter: files.compactAfter } : {}),
  };
}

/** Names of the live files at the latest snapshot (or the given one), sorted. */
export async function liveFileNames(
  t: { io: FileIO; paths: TablePaths; snapshots: SnapshotManager },
  snapshotId?: number,
): Promise<string[]> {
  const s = snapshotId === undefined ? await t.snapshots.latest() : await t.snapshots.snapshot(snapshotId);
  if (s === null) return [];
  const live = await liveEntries(t.io, t.paths, s);
  return [...live.values()].map((e) => e.file.fileName).sort();
}

/** Sum of row counts of live files. */
export async function liveRowCount(t: TestTable, snapshotId?: number): Promise<number> {
  const s = snapshotId === undefined ? await t.snapshots.latest() : await t.snapshots.snapshot(snapshotId);
  if (s === null) return 0;
  let total = 0;
  for (const e of (await liveEntries(t.io, t.paths, s)).values()) total += e.file.rowCount;
  return total;
}
