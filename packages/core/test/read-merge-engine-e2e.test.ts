/**
 * End to end: primary-key data files in Java's key-value layout (written directly, since the
 * tidemark writer does not write PK tables), committed with FileStoreCommit, read back through
 * `Table.newRead` with the aggregation engine and with `sequence.field`.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { MemoryFileIO } from '@tidemark/storage';
import {
  keyValueFileFields,
  serializeSchema,
  toArrowSchema,
  writeParquetFile,
  type DataField,
  type DataType,
  type TableSchema,
} from '@tidemark/format';
import { FileStoreCommit } from '../src/commit/file-store-commit.js';
import { makeBatch } from '../src/read/arrow-take.js';
import { openTable } from '../src/table.js';
import { TablePaths } from '../src/table-paths.js';
import { buildColumn } from '../src/write/arrow-columns.js';
import { toInternal } from '../src/write/value-conversion.js';
import { UNPARTITIONED, dataFile } from './commit-helpers.js';

const T = {
  k: { root: 'INT', nullable: false },
  int: { root: 'INT', nullable: true },
  big: { root: 'BIGINT', nullable: true },
  dec: { root: 'DECIMAL', nullable: true, precision: 12, scale: 2 },
  str: { root: 'VARCHAR', nullable: true, length: 2147483647 },
  arr: { root: 'ARRAY', nullable: true, element: { root: 'INT', nullable: true } },
  map: {
    root: 'MAP',
    nullable: true,
    key: { root: 'VARCHAR', nullable: false, length: 2147483647 },
    value: { root: 'INT', nullable: true },
  },
} as unknown as Record<string, DataType>;

interface KvRow {
  seq: number;
  kind?: number;
  v: Record<string, unknown>;
}

let tableNo = 0;

/** Creates a PK table and commits one level-0 file per element of `files`, in order. */
async function pkTable(fields: [string, DataType][], options: Record<string, string>, files: KvRow[][]) {
  const io = new MemoryFileIO();
  const root = `memory://merge-e2e-${process.pid}-${++tableNo}/wh/db.db/t`;
  const paths = new TablePaths(root);
  const dataFields: DataField[] = fields.map(([name, type], id) => ({ id, name, type }));
  const schema: TableSchema = {
    version: 3,
    id: 0,
    fields: dataFields,
    highestFieldId: dataFields.length - 1,
    partitionKeys: [],
    primaryKeys: ['k'],
    options: { bucket: '1', 'file.format': 'parquet', ...options },
    timeMillis: 0,
  };
  await io.write(paths.schemaPath(0), serializeSchema(schema));
  const commit = new FileStoreCommit(io, paths, schema);
  const kvFields = keyValueFileFields([dataFields[0]!], dataFields);
  let identifier = 0n;
  for (const rows of files) {
    const columns = [
      buildColumn(
        T.k!,
        rows.map((r) => toInternal(T.k!, r.v['k'])),
      ),
      buildColumn(
        { root: 'BIGINT', nullable: false },
        rows.map((r) => BigInt(r.seq)),
      ),
      buildColumn(
        { root: 'TINYINT', nullable: false },
        rows.map((r) => r.kind ?? 0),
      ),
      ...dataFields.map((f) =>
        buildColumn(
          f.type,
          rows.map((r) => toInternal(f.type, r.v[f.name] ?? null)),
        ),
      ),
    ];
    const batch = makeBatch(toArrowSchema(kvFields), columns, rows.length);
    const bytes = writeParquetFile([batch]);
    const name = `data-${randomUUID()}-0.parquet`;
    await io.write(paths.dataFilePath('', 0, name), bytes);
    const seqs = rows.map((r) => BigInt(r.seq));
    const meta = {
      ...dataFile(rows.length, name, 0),
      fileSize: bytes.length,
      minSequenceNumber: seqs.reduce((a, b) => (a < b ? a : b)),
      maxSequenceNumber: seqs.reduce((a, b) => (a > b ? a : b)),
    };
    await commit.commit(
      { identifier: ++identifier, messages: [{ partition: UNPARTITIONED, bucket: 0, totalBuckets: 1, newFiles: [meta] }] },
      { commitUser: 'e2e' },
    );
  }
  return openTable(root, { fileIO: io });
}

/** Result rows as plain JS (lists/maps converted), sorted by k. */
function rows(t: arrow.Table): Record<string, unknown>[] {
  const plain = (v: unknown): unknown => {
    if (v instanceof arrow.Vector) return [...v].map(plain);
    if (v instanceof arrow.MapRow) return Object.fromEntries([...(v as unknown as Iterable<[string, unknown]>)]);
    return v;
  };
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < t.numRows; i++) {
    const r: Record<string, unknown> = {};
    for (const f of t.schema.fields) r[f.name] = plain(t.getChild(f.name)!.get(i));
    out.push(r);
  }
  return out.sort((a, b) => Number(a['k']) - Number(b['k']));
}

describe('merge engines end to end on key-value files', () => {
  it('aggregation merges records across files, with computed, selected, collected and map columns', async () => {
    const table = await pkTable(
      [
        ['k', T.k!],
        ['n', T.int!],
        ['b', T.big!],
        ['d', T.dec!],
        ['s', T.str!],
        ['c', T.arr!],
        ['m', T.map!],
        ['hi', T.int!],
        ['last', T.str!],
      ],
      {
        'merge-engine': 'aggregation',
        'fields.n.aggregate-function': 'sum',
        'fields.b.aggregate-function': 'sum',
        'fields.d.aggregate-function': 'sum',
        'fields.s.aggregate-function': 'listagg',
        'fields.c.aggregate-function': 'collect',
        'fields.m.aggregate-function': 'merge_map',
        'fields.hi.aggregate-function': 'max',
        'fields.s.ignore-retract': 'true',
        'fields.hi.ignore-retract': 'true',
      },
      [
        [
          { seq: 0, v: { k: 1, n: 1, b: 9007199254740993n, d: '0.10', s: 'a', c: [1], m: { x: 1 }, hi: 5, last: 'p' } },
          { seq: 1, v: { k: 2, n: 7, b: 1n, d: '1.00', s: 'z', c: [9], m: { y: 9 }, hi: 1, last: 'q' } },
        ],
        [
          { seq: 2, v: { k: 1, n: 2, b: 9007199254740993n, d: '0.20', s: 'b', c: [2, 3], m: { x: 10, z: 3 }, hi: 4, last: null } },
          { seq: 3, kind: 1, v: { k: 2, n: 7, b: 1n, d: '1.00', c: [9], m: { y: 0 }, hi: null, last: 'q' } },
          { seq: 4, v: { k: 3, n: null, s: null, hi: 8, last: 'r' } },
        ],
      ],
    );
    const result = rows(await table.newRead().toArrowTable());
    expect(result).toEqual([
      { k: 1, n: 3, b: 18014398509481986n, d: expect.anything(), s: 'a,b', c: [1, 2, 3], m: { x: 10, z: 3 }, hi: 5, last: 'p' },
      { k: 2, n: 0, b: 0n, d: expect.anything(), s: 'z', c: [], m: {}, hi: 1, last: null },
      { k: 3, n: null, b: null, d: null, s: null, c: null, m: null, hi: 8, last: 'r' },
    ]);
    // Decimals exactly: read the unscaled 128-bit words of the column.
    const t = await table.newRead({ columns: ['k', 'd'] }).toArrowTable();
    const byKey = new Map<number, string | null>();
    for (let i = 0; i < t.numRows; i++) {
      const v = t.getChild('d')!.get(i) as Uint32Array | null;
      byKey.set(t.getChild('k')!.get(i) as number, v === null ? null : String(v[0]! + v[1]! * 2 ** 32));
    }
    expect(Object.fromEntries(byKey)).toEqual({ 1: '30', 2: '0', 3: null });
    // A filter on an aggregated value applies to the merged rows.
    expect(rows(await table.newRead({ where: 'n > 1', columns: ['k', 'n'] }).toArrowTable())).toEqual([{ k: 1, n: 3 }]);
  });

  it('deduplicate orders by sequence.field before _SEQUENCE_NUMBER', async () => {
    const table = await pkTable(
      [
        ['k', T.k!],
        ['ts', T.big!],
        ['v', T.str!],
      ],
      { 'sequence.field': 'ts' },
      [
        [
          { seq: 0, v: { k: 1, ts: 100n, v: 'new' } },
          { seq: 1, v: { k: 2, ts: null, v: 'null-ts' } },
        ],
        [
          // Written later but older by the sequence field: must not win.
          { seq: 2, v: { k: 1, ts: 50n, v: 'late-old' } },
          { seq: 3, v: { k: 2, ts: 1n, v: 'has-ts' } },
          { seq: 4, kind: 3, v: { k: 1, ts: 10n, v: null } },
        ],
      ],
    );
    expect(rows(await table.newRead().toArrowTable())).toEqual([
      { k: 1, ts: 100n, v: 'new' },
      { k: 2, ts: 1n, v: 'has-ts' },
    ]);
    // Projection without the sequence field still orders by it.
    expect(rows(await table.newRead({ columns: ['k', 'v'] }).toArrowTable())).toEqual([
      { k: 1, v: 'new' },
      { k: 2, v: 'has-ts' },
    ]);
  });
});
