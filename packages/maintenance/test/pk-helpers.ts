/**
 * Helpers of the primary-key compaction tests: a primary-key table whose commits are level-0
 * key-value files written directly in Java's layout (so each test controls exactly which records,
 * sequence numbers, row kinds and levels the bucket holds), a random operation generator and a
 * canonical dump of what a read returns at a snapshot.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import {
  EMPTY_SIMPLE_STATS,
  keyValueFileFields,
  serializeBinaryRow,
  toArrowSchema,
  writeParquetFile,
  type DataFileMeta,
  type DataType,
} from '@tidemark/format';
import { FileSystemCatalog, makeBatch, openTable, valueReader, type Table } from '@tidemark/core';
import { buildColumn } from '../../core/src/write/arrow-columns.js';

/** `k INT NOT NULL` (primary key), `dt STRING NOT NULL` (partition), `a BIGINT`, `s STRING`. */
export const PK_FIELDS = [
  { name: 'k', type: 'INT NOT NULL' },
  { name: 'dt', type: 'STRING NOT NULL' },
  { name: 'a', type: 'BIGINT' },
  { name: 's', type: 'STRING' },
];

/** One record: key, partition, row kind (0 +I, 1 -U, 2 +U, 3 -D) and values. */
export interface PkRecord {
  readonly k: number;
  readonly dt: string;
  readonly kind: number;
  readonly a: bigint | null;
  readonly s: string | null;
}

const INT: DataType = { root: 'INT', nullable: false } as DataType;
const SEQ: DataType = { root: 'BIGINT', nullable: false } as DataType;
const KIND: DataType = { root: 'TINYINT', nullable: false } as DataType;

let n = 0;

/** Creates the primary-key table (2 fixed buckets, partitioned by dt) with extra `options`. */
export async function createPkTable(options: Record<string, string>, io: FileIO = new LocalFileIO(), warehouse?: string): Promise<Table> {
  const wh = warehouse ?? (await mkdtemp(join(tmpdir(), 'tidemark-pk-compact-')));
  const catalog = new FileSystemCatalog(wh, { fileIO: io });
  const name = `db.pk${++n}`;
  await catalog.createTable(name, {
    fields: PK_FIELDS,
    partitionKeys: ['dt'],
    primaryKeys: ['k', 'dt'],
    options: { bucket: '2', ...options },
  });
  return openTable(catalog.tableLocation(name), { fileIO: io });
}

/** Bucket of a key in these tests (reads do not check the hash, and every test uses this rule). */
export const bucketOf = (k: number): number => k % 2;

/**
 * Commits `records` as one APPEND snapshot: per (partition, bucket), one level-0 file holding the
 * records sorted by key, with sequence numbers continuing from `nextSequence` (returned updated).
 * Keys must be unique per call and bucket, as a writer's merged flush makes them.
 */
export async function commitRecords(
  table: Table,
  records: readonly PkRecord[],
  nextSequence: Map<string, bigint>,
  level = 0,
): Promise<void> {
  const schema = table.schema();
  const fields = schema.fields;
  const kvFields = keyValueFileFields([fields[0]!], fields);
  const groups = new Map<string, PkRecord[]>();
  for (const r of records) {
    const key = `${r.dt}|${bucketOf(r.k)}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const messages = [];
  for (const [key, group] of groups) {
    const [dt, b] = key.split('|') as [string, string];
    const sorted = [...group].sort((x, y) => x.k - y.k);
    let seq = nextSequence.get(key) ?? 0n;
    const seqs = sorted.map(() => seq++);
    nextSequence.set(key, seq);
    const columns = [
      buildColumn(
        INT,
        sorted.map((r) => r.k),
      ),
      buildColumn(SEQ, seqs),
      buildColumn(
        KIND,
        sorted.map((r) => r.kind),
      ),
      buildColumn(
        fields[0]!.type,
        sorted.map((r) => r.k),
      ),
      buildColumn(
        fields[1]!.type,
        sorted.map((r) => r.dt),
      ),
      buildColumn(
        fields[2]!.type,
        sorted.map((r) => r.a),
      ),
      buildColumn(
        fields[3]!.type,
        sorted.map((r) => r.s),
      ),
    ];
    const bytes = writeParquetFile([makeBatch(toArrowSchema(kvFields), columns, sorted.length)]);
    const name = `data-${randomUUID()}-0.parquet`;
    const partitionPath = `dt=${dt}/`;
    await table.fileIO.write(table.paths.dataFilePath(partitionPath, Number(b), name), bytes);
    const file: DataFileMeta = {
      fileName: name,
      fileSize: bytes.length,
      rowCount: sorted.length,
      minKey: serializeBinaryRow([INT], [sorted[0]!.k]),
      maxKey: serializeBinaryRow([INT], [sorted[sorted.length - 1]!.k]),
      keyStats: EMPTY_SIMPLE_STATS,
      valueStats: EMPTY_SIMPLE_STATS,
      minSequenceNumber: seqs[0]!,
      maxSequenceNumber: seqs[seqs.length - 1]!,
      schemaId: schema.id,
      level,
      extraFiles: [],
      creationTime: Date.now(),
      deleteRowCount: sorted.filter((r) => r.kind === 1 || r.kind === 3).length,
      embeddedIndex: null,
      fileSource: 0,
      valueStatsCols: null,
      externalPath: null,
      firstRowId: null,
      writeCols: null,
      writeColsSequences: null,
    };
    messages.push({
      partition: serializeBinaryRow([{ root: 'VARCHAR', nullable: false, length: 2147483647 } as DataType], [dt]),
      bucket: Number(b),
      totalBuckets: 2,
      newFiles: [file],
    });
  }
  const result = await table.newCommit().commit({ identifier: 9223372036854775807n, messages });
  if (result.status !== 'committed') throw new Error(`commit of ${records.length} records: ${result.status}`);
}

/** Every row a read of `snapshotId` (default latest) returns, canonical and sorted. */
export async function rowsAt(table: Table, snapshotId?: number): Promise<string[]> {
  return (await rowsInReadOrder(table, snapshotId)).sort();
}

/**
 * Every row a read of `snapshotId` (default latest) returns, in the order the read returns them,
 * as canonical strings of the exact internal values (bigints as `<n>n`, bytes as hex).
 */
export async function rowsInReadOrder(table: Table, snapshotId?: number): Promise<string[]> {
  const read = table.newRead(snapshotId === undefined ? {} : { snapshotId });
  const schema = await read.tableSchema();
  const out: string[] = [];
  for await (const batch of read.batches()) {
    const readers = schema.fields.map((f, c) => valueReader(batch.data.children[c]!, f.type));
    for (let r = 0; r < batch.numRows; r++) {
      out.push(
        JSON.stringify(
          readers.map((read) => read(r)),
          (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v),
        ),
      );
    }
  }
  return out;
}

/** Live files of the latest snapshot as `partition bucket level name`. */
export async function levelsOf(
  table: Table,
): Promise<{ bucket: number; level: number; name: string; partition: string; source: number | null }[]> {
  const plan = await table.newRead().plan();
  return plan.splits.flatMap((s) =>
    s.files.map((f) => ({
      partition: s.partitionPath,
      bucket: s.bucket,
      level: f.meta.level,
      name: f.meta.fileName,
      source: f.meta.fileSource,
    })),
  );
}
