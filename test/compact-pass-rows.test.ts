/**
 * Append compaction that passes the decode workers' IPC streams straight to the encode workers
 * (`passDecodedRows`, the default), on local disk and on the real S3 server: the same table
 * compacted that way and with every row through Arrow on the main thread (`passDecodedRows: false`)
 * gives the same rows in the same order, the same row groups, and manifest entries equal field by
 * field (statistics included: `truncate(16)` string bounds, a `counts` column, nulls), also when
 * some inputs are of an older schema (those take the Arrow path, in the same output file).
 */
import { describe, expect, it, vi } from 'vitest';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import { readParquetFooter, sharedParquetWorkerPool } from '@tidemark/format';
import { SchemaChanges, alterTable, openTable, type Table } from '@tidemark/core';
import { compactAppendTable } from '@tidemark/maintenance';
import { TYPED_SPEC, copyOf, createTable, liveFileMetas, typedRow } from '../packages/maintenance/test/compact-helpers.js';
import { rowsInReadOrder } from '../packages/maintenance/test/pk-helpers.js';
import { itOnS3Warehouse } from './support/table-locations.js';

/** Input files in append order (rows each): small and larger ones, one of a single row. */
const LAYOUT = [300, 1_500, 700, 1, 2_000, 450];

async function filled(fileIO: FileIO, warehouse: string | undefined, evolve: boolean): Promise<Table> {
  let table = await createTable(
    {
      ...TYPED_SPEC,
      options: { bucket: '-1', 'compaction.min.file-num': '2', 'fields.bin.stats-mode': 'counts', 'fields.i.stats-mode': 'none' },
    },
    { fileIO, ...(warehouse ? { warehouse } : {}) },
  );
  let id = 0;
  for (const [k, rows] of LAYOUT.entries()) {
    if (evolve && k === 2) {
      // Files before this are of schema 0: their rows are evolved (a null column added) on the main thread.
      await alterTable(table.fileIO, table.paths, [SchemaChanges.addColumn('extra', 'INT')]);
      table = await openTable(table.location, { fileIO: table.fileIO });
    }
    await table.append(
      Array.from({ length: rows }, () => {
        const row = typedRow(++id, '2024-05-01');
        return evolve && k >= 2 ? { ...row, extra: id % 5 === 0 ? null : id * 3 } : row;
      }),
    );
  }
  return table;
}

/** Compacts `table`; returns how many output groups were joined from IPC streams on the workers. */
async function compact(table: Table, passDecodedRows: boolean): Promise<number> {
  const joined = vi.spyOn(sharedParquetWorkerPool(), 'encodeIpcSegments');
  try {
    const s = await compactAppendTable(table, { full: true, passDecodedRows });
    expect(s.snapshotId).not.toBeNull();
    expect(s.filesAfter).toBe(1);
    return joined.mock.calls.length;
  } finally {
    joined.mockRestore();
  }
}

async function sameAsArrowPath(fileIO: FileIO, root: string | undefined, evolve: boolean): Promise<void> {
  const passed = await filled(fileIO, root === undefined ? undefined : `${root}/a`, evolve);
  const arrowed = await copyOf(passed, `${root ?? passed.location.slice(0, passed.location.lastIndexOf('/'))}/copy-${evolve}`);
  const before = await rowsInReadOrder(passed);
  expect(await rowsInReadOrder(arrowed)).toEqual(before);

  expect(await compact(passed, true)).toBeGreaterThan(0);
  expect(await compact(arrowed, false)).toBe(0);

  const rows = await rowsInReadOrder(passed);
  expect(rows).toHaveLength(LAYOUT.reduce((a, b) => a + b, 0));
  expect(rows).toEqual(before);
  expect(await rowsInReadOrder(arrowed)).toEqual(rows);

  const [a] = await liveFileMetas(passed);
  const [b] = await liveFileMetas(arrowed);
  const { fileName: _a, creationTime: _ta, fileSize: sizeA, ...entryA } = a!.meta;
  const { fileName: _b, creationTime: _tb, fileSize: sizeB, ...entryB } = b!.meta;
  // Field by field: statistics, row count, sequence numbers, schema id, level, file source.
  expect(entryA).toEqual(entryB);
  expect(entryA.schemaId).toBe(evolve ? 1 : 0);
  // The same rows in the same row groups, encoded by the same writer: a file of the same size
  // (within 1 %: the pages of a group joined from several streams may break elsewhere).
  expect(Math.abs(sizeA - sizeB)).toBeLessThanOrEqual(sizeB / 100);
  const groups = async (path: string, io: FileIO): Promise<bigint[]> => (await readParquetFooter(io, path)).rowGroups.map((g) => g.numRows);
  expect(await groups(a!.path, fileIO)).toEqual(await groups(b!.path, fileIO));
}

/** `io` counting the `stat`s of each path. */
function countingStats(io: FileIO): { io: FileIO; stats: Map<string, number> } {
  const stats = new Map<string, number>();
  const proxy = new Proxy(io, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'stat') {
        return (path: string) => {
          stats.set(path, (stats.get(path) ?? 0) + 1);
          return (v as (p: string) => Promise<unknown>).call(target, path);
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { io: proxy, stats };
}

describe("the COMPACT commit's check of the table it builds on", () => {
  it('does not stat the inputs it deletes; the next commit to the bucket stats the output (local disk)', async () => {
    const table = await filled(new LocalFileIO(), undefined, false);
    const inputs = await liveFileMetas(table);
    const { io, stats } = countingStats(table.fileIO);
    const counted = await openTable(table.location, { fileIO: io });
    const s = await compactAppendTable(counted, { full: true });
    expect(s.snapshotId).not.toBeNull();
    expect(inputs.filter((f) => stats.has(f.path)).map((f) => f.path)).toEqual([]);
    // Its bucket is folded afresh by the next commit that touches it: the live output is checked.
    stats.clear();
    const [output] = await liveFileMetas(counted);
    await counted.append([typedRow(99_999, '2024-05-01')]);
    expect(stats.get(output!.path)).toBe(1);
    expect(inputs.filter((f) => stats.has(f.path)).map((f) => f.path)).toEqual([]);
  }, 120_000);
});

describe('append compaction passing decoded rows on as IPC', () => {
  it('writes what the Arrow path writes: rows, order, row groups, manifest entry (local disk)', async () => {
    await sameAsArrowPath(new LocalFileIO(), undefined, false);
  }, 120_000);

  it('writes what the Arrow path writes with inputs of an older schema among them (local disk)', async () => {
    await sameAsArrowPath(new LocalFileIO(), undefined, true);
  }, 120_000);

  itOnS3Warehouse(
    'compaction passing decoded rows on S3',
    'writes what the Arrow path writes, with and without an older schema (S3 server)',
    'compact-pass-rows',
    async (fileIO, root) => {
      await sameAsArrowPath(fileIO, `${root}/plain`, false);
      await sameAsArrowPath(fileIO, `${root}/evolved`, true);
    },
    240_000,
  );
});
