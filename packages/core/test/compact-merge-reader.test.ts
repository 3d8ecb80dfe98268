/**
 * The windowed merge-read of compaction on key-value files written directly: every window holds
 * all records of its keys from every run (also when a run holds several records of one key that
 * straddle a batch boundary) and no key appears in two windows; the merged output is in key order.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { keyValueFileFields, toArrowSchema, writeParquetFile, type DataField, type DataType, type TableSchema } from '@tidemark/format';
import { makeBatch } from '../src/read/arrow-take.js';
import { valueReader } from '../src/read/arrow-values.js';
import { buildColumn } from '../src/write/arrow-columns.js';
import { SortedRun, mergeSections, type KeyValueSegment } from '../src/index.js';
import { dataFile } from './commit-helpers.js';

const K: DataType = { root: 'INT', nullable: false } as DataType;
const V: DataType = { root: 'BIGINT', nullable: true } as DataType;
const fields: DataField[] = [
  { id: 0, name: 'k', type: K },
  { id: 1, name: 'v', type: V },
];
const schema: TableSchema = {
  version: 3,
  id: 0,
  fields,
  highestFieldId: 1,
  partitionKeys: [],
  primaryKeys: ['k'],
  options: { bucket: '1' },
  timeMillis: 0,
};
const bucketPath = 'memory://merge-reader/t/bucket-0';

/** Writes one key-value file of (key, sequence) records (key order) and returns its meta. */
async function kvFile(io: MemoryFileIO, records: [number, number][]) {
  const kvFields = keyValueFileFields([fields[0]!], fields);
  const columns = [
    buildColumn(
      K,
      records.map(([k]) => k),
    ),
    buildColumn(
      { root: 'BIGINT', nullable: false } as DataType,
      records.map(([, s]) => BigInt(s)),
    ),
    buildColumn(
      { root: 'TINYINT', nullable: false } as DataType,
      records.map(() => 0),
    ),
    buildColumn(
      K,
      records.map(([k]) => k),
    ),
    buildColumn(
      V,
      records.map(([, s]) => BigInt(s)),
    ),
  ];
  const bytes = writeParquetFile([makeBatch(toArrowSchema(kvFields), columns, records.length)]);
  const name = `data-${randomUUID()}-0.parquet`;
  await io.write(`${bucketPath}/${name}`, bytes);
  return { ...dataFile(records.length, name, 0), fileSize: bytes.length };
}

describe('mergeSections', () => {
  it('merges runs in key windows that never split a key', async () => {
    const io = new MemoryFileIO();
    // Run A: two files; the second repeats key 7 (three records) across a batch boundary of 2 rows.
    const a1 = await kvFile(io, [
      [1, 1],
      [3, 2],
      [5, 3],
    ]);
    const a2 = await kvFile(io, [
      [7, 4],
      [7, 5],
      [7, 6],
      [9, 7],
      [11, 8],
    ]);
    // Run B: one file interleaving with A.
    const b = await kvFile(io, [
      [2, 20],
      [3, 21],
      [7, 22],
      [8, 23],
      [11, 24],
      [12, 25],
    ]);
    const windows: number[][] = [];
    const merge = (segments: readonly KeyValueSegment[]): KeyValueSegment | null => {
      // Test merge: the highest sequence per key, keys in order.
      const best = new Map<number, bigint>();
      for (const s of segments) {
        const key = valueReader(s.columns[0]!, K);
        for (let r = 0; r < s.rows; r++) {
          const k = key(r) as number;
          if (!best.has(k) || best.get(k)! < s.sequence[r]!) best.set(k, s.sequence[r]!);
        }
      }
      const keys = [...best.keys()].sort((x, y) => x - y);
      windows.push(keys);
      return {
        columns: [
          buildColumn(K, keys),
          buildColumn(
            V,
            keys.map((k) => best.get(k)!),
          ),
        ],
        sequence: BigInt64Array.from(keys.map((k) => best.get(k)!)),
        kinds: new Int8Array(keys.length),
        rows: keys.length,
      };
    };
    const ctx = {
      fileIO: io,
      pathOf: (name: string) => `${bucketPath}/${name}`,
      schemaOf: async () => schema,
      readFields: fields,
      keyPositions: [0],
      batchSize: 2,
    };
    const out: [number, bigint][] = [];
    for await (const seg of mergeSections(ctx, [[SortedRun.fromSorted([a1, a2]), SortedRun.fromSorted([b])]], merge)) {
      const key = valueReader(seg.columns[0]!, K);
      for (let r = 0; r < seg.rows; r++) out.push([key(r) as number, seg.sequence[r]!]);
    }
    expect(out).toEqual([
      [1, 1n],
      [2, 20n],
      [3, 21n],
      [5, 3n],
      [7, 22n],
      [8, 23n],
      [9, 7n],
      [11, 24n],
      [12, 25n],
    ]);
    // No key is merged in two windows, and windows are small (batches of 2 rows).
    const all = windows.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(windows.length).toBeGreaterThan(3);
  });
});
