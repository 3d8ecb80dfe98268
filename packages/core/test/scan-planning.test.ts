/**
 * Scan planning and evolved reads on a small synthetic append table in memory: two schema
 * versions (INT id widened to BIGINT, a rename, an added column), ADD/DELETE folding across
 * manifests, value-stats pruning mapped by field id and `_VALUE_STATS_COLS`, and the corrupt
 * leftover-DELETE case.
 */
import * as arrow from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import {
  EMPTY_SIMPLE_STATS,
  serializeBinaryRow,
  serializeSchema,
  serializeSnapshot,
  toArrowSchema,
  writeManifestFileTo,
  writeManifestListTo,
  writeParquetFile,
  type DataField,
  type DataFileMeta,
  type DataType,
  type ManifestEntry,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { openTable } from '../src/table.js';
import { TablePaths } from '../src/table-paths.js';
import { CorruptTableError } from '../src/scan/errors.js';
import { memoryRoot } from './helpers.js';

const INT: DataType = { root: 'INT', nullable: true };
const BIGINT: DataType = { root: 'BIGINT', nullable: true };
const STRING: DataType = { root: 'VARCHAR', nullable: true, length: 2147483647 };
const DOUBLE: DataType = { root: 'DOUBLE', nullable: true };

const schema0Fields: DataField[] = [
  { id: 0, name: 'id', type: INT },
  { id: 1, name: 'name', type: STRING },
];
const schema1Fields: DataField[] = [
  { id: 0, name: 'id', type: BIGINT },
  { id: 1, name: 'label', type: STRING },
  { id: 2, name: 'score', type: DOUBLE },
];

function schema(id: number, fields: DataField[]): TableSchema {
  return { version: 3, id, fields, highestFieldId: 2, partitionKeys: [], primaryKeys: [], options: { bucket: '-1' }, timeMillis: 0 };
}

const EMPTY_PARTITION = serializeBinaryRow([], []);

function fileMeta(
  name: string,
  schemaId: number,
  rows: number,
  stats: DataFileMeta['valueStats'],
  statsCols: string[] | null,
): DataFileMeta {
  return {
    fileName: name,
    fileSize: 0,
    rowCount: rows,
    minKey: EMPTY_PARTITION,
    maxKey: EMPTY_PARTITION,
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: stats,
    minSequenceNumber: 0n,
    maxSequenceNumber: BigInt(rows - 1),
    schemaId,
    level: 0,
    extraFiles: [],
    creationTime: null,
    deleteRowCount: 0,
    embeddedIndex: null,
    fileSource: 0,
    valueStatsCols: statsCols,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
  };
}

function entry(kind: 'ADD' | 'DELETE', file: DataFileMeta): ManifestEntry {
  return { kind, partition: EMPTY_PARTITION, bucket: 0, totalBuckets: -1, file };
}

const io = new MemoryFileIO();
const root = memoryRoot();
const paths = new TablePaths(root);

async function writeData(name: string, fields: DataField[], columns: arrow.Vector[]): Promise<number> {
  const batch = new arrow.RecordBatch(
    toArrowSchema(fields),
    arrow.makeData({
      type: new arrow.Struct(toArrowSchema(fields).fields),
      length: columns[0]!.length,
      nullCount: 0,
      children: columns.map((c) => c.data[0]!),
    }),
  );
  const bytes = writeParquetFile([batch]);
  await io.write(paths.dataFilePath('', 0, name), bytes);
  return bytes.length;
}

async function writeSnapshot(id: number, schemaId: number, manifests: ManifestEntry[][]): Promise<void> {
  const metas = [];
  for (const [i, entries] of manifests.entries()) {
    const name = `manifest-s${id}-${i}`;
    const size = await writeManifestFileTo(io, paths.manifestPath(name), entries);
    metas.push({
      fileName: name,
      fileSize: size,
      numAddedFiles: entries.filter((e) => e.kind === 'ADD').length,
      numDeletedFiles: entries.filter((e) => e.kind === 'DELETE').length,
      partitionStats: EMPTY_SIMPLE_STATS,
      schemaId,
      minBucket: 0,
      maxBucket: 0,
      minLevel: 0,
      maxLevel: 0,
      minRowId: null,
      maxRowId: null,
    });
  }
  await writeManifestListTo(io, paths.manifestPath(`list-base-${id}`), []);
  await writeManifestListTo(io, paths.manifestPath(`list-delta-${id}`), metas);
  const snapshot: Snapshot = {
    version: 3,
    id,
    schemaId,
    baseManifestList: `list-base-${id}`,
    deltaManifestList: `list-delta-${id}`,
    commitUser: 'test',
    commitIdentifier: 9223372036854775807n,
    commitKind: 'APPEND',
    timeMillis: 1000 * id,
  };
  await io.write(paths.snapshotPath(id), serializeSnapshot(snapshot));
}

beforeAll(async () => {
  await io.write(paths.schemaPath(0), serializeSchema(schema(0, schema0Fields)));
  await io.write(paths.schemaPath(1), serializeSchema(schema(1, schema1Fields)));
  const sizeA = await writeData('data-a.parquet', schema0Fields, [
    arrow.vectorFromArray([1, 2, 3], new arrow.Int32()),
    arrow.vectorFromArray(['one', 'two', 'three'], new arrow.Utf8()),
  ]);
  const sizeB = await writeData('data-b.parquet', schema1Fields, [
    arrow.vectorFromArray([10n, 11n, 12n], new arrow.Int64()),
    arrow.vectorFromArray(['ten', null, 'twelve'], new arrow.Utf8()),
    arrow.vectorFromArray([1.5, 2.5, null], new arrow.Float64()),
  ]);
  // File A: stats over schema-0 columns (id INT, name STRING).
  const a = {
    ...fileMeta(
      'data-a.parquet',
      0,
      3,
      {
        minValues: serializeBinaryRow([INT, STRING], [1, 'one']),
        maxValues: serializeBinaryRow([INT, STRING], [3, 'two']),
        nullCounts: [0, 0],
      },
      null,
    ),
    fileSize: sizeA,
  };
  // File B: dense stats for `id` only (`_VALUE_STATS_COLS`).
  const b = {
    ...fileMeta(
      'data-b.parquet',
      1,
      3,
      {
        minValues: serializeBinaryRow([BIGINT], [10n]),
        maxValues: serializeBinaryRow([BIGINT], [12n]),
        nullCounts: [0],
      },
      ['id'],
    ),
    fileSize: sizeB,
  };
  const ghost = fileMeta('data-ghost.parquet', 0, 1, EMPTY_SIMPLE_STATS, null);
  // Snapshot 1: ADD a, ADD ghost, ADD b in one manifest; DELETE ghost in a later manifest.
  await writeSnapshot(1, 1, [[entry('ADD', a), entry('ADD', ghost), entry('ADD', b)], [entry('DELETE', ghost)]]);
  // Snapshot 2: deletes a file nobody added → corrupt.
  await writeSnapshot(2, 1, [[entry('ADD', a)], [entry('DELETE', fileMeta('data-missing.parquet', 0, 1, EMPTY_SIMPLE_STATS, null))]]);
  // Snapshot 3: a later manifest adds b again without deleting it first → corrupt.
  await writeSnapshot(3, 1, [[entry('ADD', a), entry('ADD', b)], [entry('ADD', b)]]);
  // Snapshot 4: b is deleted and added again (same identity), a is deleted: only b is live.
  await writeSnapshot(4, 1, [[entry('ADD', a), entry('ADD', b)], [entry('DELETE', b), entry('DELETE', a)], [entry('ADD', b)]]);
});

function rows(t: arrow.Table): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < t.numRows; i++) out.push(t.schema.fields.map((_, c) => t.getChildAt(c)!.get(i) ?? null));
  return out.sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : 1));
}

describe('FileStoreScan and evolved reads (synthetic table)', () => {
  it('folds ADD/DELETE across manifests: the deleted file is not planned', async () => {
    const table = await openTable(root, { fileIO: io });
    const files = (await table.newRead({ snapshotId: 1 }).plan()).files();
    expect(files.map((f) => f.fileName).sort()).toEqual(['data-a.parquet', 'data-b.parquet']);
  });

  it('reads each file with its own schema: widened id, renamed column by field id, added column null', async () => {
    const table = await openTable(root, { fileIO: io });
    const t = await table.newRead({ snapshotId: 1 }).toArrowTable();
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual(['id:Int64', 'label:Utf8', 'score:Float64']);
    expect(rows(t)).toEqual([
      [1n, 'one', null],
      [10n, 'ten', 1.5],
      [11n, null, 2.5],
      [12n, 'twelve', null],
      [2n, 'two', null],
      [3n, 'three', null],
    ]);
  });

  it('prunes files by value stats mapped by field id (and keeps files without stats for a column)', async () => {
    const table = await openTable(root, { fileIO: io });
    const names = async (where: string) =>
      (await table.newRead({ snapshotId: 1, where }).plan())
        .files()
        .map((f) => f.fileName)
        .sort();
    expect(await names('id >= 10')).toEqual(['data-b.parquet']);
    expect(await names('id < 5')).toEqual(['data-a.parquet']);
    // `label` is `name` (field 1) in file A: min 'one', max 'two' excludes 'zzz'; B has no stats for it.
    expect(await names("label = 'zzz'")).toEqual(['data-b.parquet']);
    const t = await table.newRead({ snapshotId: 1, where: 'id >= 11 AND label IS NOT NULL', columns: ['label'] }).toArrowTable();
    expect(rows(t)).toEqual([['twelve']]);
  });

  it('a DELETE without a matching ADD is reported as a corrupt table naming the snapshot', async () => {
    const table = await openTable(root, { fileIO: io });
    await expect(table.newRead({ snapshotId: 2 }).plan()).rejects.toThrow(CorruptTableError);
    await expect(table.newRead({ snapshotId: 2 }).plan()).rejects.toThrow(/snapshot 2: .*data-missing\.parquet/);
  });

  it('a file added twice without a DELETE between is reported as a corrupt table naming the manifest', async () => {
    const table = await openTable(root, { fileIO: io });
    await expect(table.newRead({ snapshotId: 3 }).plan()).rejects.toThrow(CorruptTableError);
    await expect(table.newRead({ snapshotId: 3 }).plan()).rejects.toThrow(
      /snapshot 3: manifest manifest-s3-1 adds .*data-b\.parquet.*already added/,
    );
  });

  it('a file deleted and added again is planned once; a deleted file whose bucket empties leaves no split', async () => {
    const table = await openTable(root, { fileIO: io });
    const plan = await table.newRead({ snapshotId: 4 }).plan();
    expect(plan.splits).toHaveLength(1);
    expect(plan.files().map((f) => f.fileName)).toEqual(['data-b.parquet']);
  });
});
