/**
 * Append compaction that copies the row groups of large inputs instead of decoding them, on local
 * disk and on the real S3 server: the same table compacted with the copy and without it (every input
 * decoded and re-encoded) gives the same rows in the same order and manifest entries equal field by
 * field (statistics included, with `truncate(16)` string bounds), the copied groups are in the
 * output as they were, and DuckDB (zstd) and hyparquet (snappy) read the joined file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import { CorruptFileError, readParquetFooter, sharedParquetWorkerPool, type DataFileMeta } from '@tidemark/format';
import { SchemaChanges, alterTable, openTable, type Table } from '@tidemark/core';
import { compactAppendTable } from '@tidemark/maintenance';
import {
  TYPED_SPEC,
  copyOf,
  createTable,
  parquetFilesOnDisk,
  liveFileMetas,
  typedRow,
} from '../packages/maintenance/test/compact-helpers.js';
import { rowsInReadOrder } from '../packages/maintenance/test/pk-helpers.js';
import { runTidemark } from './support/cli-process.js';
import { itOnS3Warehouse } from './support/table-locations.js';

type Duck = typeof import('@duckdb/node-api');
let duck: Duck | undefined;
try {
  duck = await import('@duckdb/node-api');
} catch (e) {
  console.warn(`[tidemark] SKIPPED DuckDB check of row-group copies: @duckdb/node-api cannot be loaded (${(e as Error).message})`);
}

/** Groups of at least this many rows are copied in these tests (files of `LARGE` rows are one group). */
const MIN_ROWS = 1_000;
const LARGE = 1_500;
const SMALL = 300;
/** Input files in append order: large ones (copied) between runs of small ones (decoded). */
const LAYOUT = [SMALL, LARGE, LARGE, SMALL, SMALL, LARGE, SMALL - 100];

/** A table of {@link TYPED_SPEC} holding {@link LAYOUT}, all in one partition. */
async function filled(fileIO: FileIO, compression: string, warehouse?: string, options: Record<string, string> = {}): Promise<Table> {
  const table = await createTable(
    { ...TYPED_SPEC, options: { bucket: '-1', 'compaction.min.file-num': '2', 'file.compression': compression, ...options } },
    { fileIO, ...(warehouse ? { warehouse } : {}) },
  );
  let id = 0;
  for (const rows of LAYOUT) {
    await table.append(Array.from({ length: rows }, () => typedRow(++id, '2024-05-01')));
  }
  return table;
}

/** The manifest fields a rewrite decides, not its file name, size or creation time. */
function comparable(meta: DataFileMeta): Record<string, unknown> {
  const { fileName: _n, fileSize: _s, creationTime: _c, ...rest } = meta;
  return JSON.parse(
    JSON.stringify(rest, (_k, v: unknown) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
    ),
  ) as Record<string, unknown>;
}

/**
 * Compacts `table` with the row-group copy and a copy of it without; checks rows, entries and the
 * copied groups, and returns both outputs for the readers' checks.
 */
async function compactBothWays(table: Table, copyLocation: string): Promise<{ copied: string; rewritten: string; rows: string[] }> {
  const plain = await copyOf(table, copyLocation);
  const pool = sharedParquetWorkerPool();
  const decodes = vi.spyOn(pool, 'decodeIpc');
  let copiedDecodes: number;
  try {
    const s = await compactAppendTable(table, { full: true, copyRowGroups: true, copyRowGroupsMinRows: MIN_ROWS });
    expect(s.snapshotId).not.toBeNull();
    copiedDecodes = decodes.mock.calls.length;
    decodes.mockClear();
    const r = await compactAppendTable(plain, { full: true });
    expect(r.snapshotId).not.toBeNull();
    // The large inputs were not decoded: only the small ones (one row group each) were.
    expect(decodes.mock.calls.length).toBe(LAYOUT.length);
    expect(copiedDecodes).toBe(LAYOUT.filter((n) => n < MIN_ROWS).length);
  } finally {
    decodes.mockRestore();
  }
  const [a] = await liveFileMetas(table);
  const [b] = await liveFileMetas(plain);
  expect(await liveFileMetas(table)).toHaveLength(1);
  expect(await liveFileMetas(plain)).toHaveLength(1);
  // Field by field, statistics included: the copied inputs' manifest stats merged with the decoded rows'.
  expect(comparable(a!.meta)).toEqual(comparable(b!.meta));
  expect(a!.meta.valueStats.nullCounts?.some((n) => n! > 0)).toBe(true);
  // The same rows in the same order.
  const rows = await rowsInReadOrder(table);
  expect(rows).toHaveLength(LAYOUT.reduce((x, y) => x + y, 0));
  expect((await rowsInReadOrder(plain)).findIndex((r, i) => r !== rows[i])).toBe(-1);
  // Each large input is a row group of its own in the output, the small runs between them groups of their rows.
  const groups = (await readParquetFooter(table.fileIO, a!.path)).rowGroups.map((g) => Number(g.numRows));
  expect(groups.filter((n) => n === LARGE)).toHaveLength(LAYOUT.filter((n) => n === LARGE).length);
  expect(groups.reduce((x, y) => x + y, 0)).toBe(rows.length);
  return { copied: a!.path, rewritten: b!.path, rows };
}

describe('append compaction copying the row groups of large inputs', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('matches a full rewrite in rows, order and manifest entry, and DuckDB reads the joined file (local disk, zstd)', async () => {
    const table = await filled(new LocalFileIO(), 'zstd');
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-copy-'));
    dirs.push(dir);
    const { copied, rewritten, rows } = await compactBothWays(table, join(dir, 'plain'));
    if (!duck) return;
    const instance = await duck.DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      await conn.run('SET threads = 1');
      const ids = (await conn.runAndReadAll(`SELECT id FROM read_parquet('${copied}')`)).getRows().map((r) => String(r[0]));
      expect(ids).toEqual(rows.map((r) => (JSON.parse(r) as string[])[0]!.slice(0, -1)));
      const summary = async (path: string): Promise<unknown> =>
        (
          await conn.runAndReadAll(
            `SELECT count(*), count(i), sum(i), min(s), max(s), count(bin), sum(f64), count(b), min(ts9), max(ltz), min(bigdec), max(dec)
             FROM read_parquet('${path}')`,
          )
        ).getRowsJson();
      expect(await summary(copied)).toEqual(await summary(rewritten));
    } finally {
      conn.closeSync();
    }
  }, 120_000);

  itOnS3Warehouse(
    'row-group copy on S3',
    'matches a full rewrite on the S3 server, and hyparquet reads the joined file (snappy)',
    'compact-copy',
    async (fileIO, root) => {
      const table = await filled(fileIO, 'snappy', root);
      const { copied, rows } = await compactBothWays(table, `${root}/plain`);
      const dir = await mkdtemp(join(tmpdir(), 'tidemark-copy-'));
      dirs.push(dir);
      const local = join(dir, 'copied.parquet');
      await new LocalFileIO().write(local, await fileIO.read(copied));
      const objects = await parquetReadObjects({ file: await asyncBufferFromFile(local), columns: ['id', 's'] });
      expect(objects.map((o) => String(o['id']))).toEqual(rows.map((r) => (JSON.parse(r) as string[])[0]!.slice(0, -1)));
      expect(objects.map((o) => o['s'] ?? null)).toEqual(rows.map((r) => (JSON.parse(r) as unknown[])[8]));
    },
    180_000,
  );

  /** Decodes of `table`'s compaction with the copy on (every input of LAYOUT is one row group). */
  async function decodesOf(table: Table): Promise<number> {
    const decodes = vi.spyOn(sharedParquetWorkerPool(), 'decodeIpc');
    try {
      const s = await compactAppendTable(table, { full: true, copyRowGroups: true, copyRowGroupsMinRows: MIN_ROWS });
      expect(s.snapshotId).not.toBeNull();
      return decodes.mock.calls.length;
    } finally {
      decodes.mockRestore();
    }
  }

  it('decodes a large input of an older schema instead of copying it (its statistics followed other options)', async () => {
    const table = await filled(new LocalFileIO(), 'zstd');
    await alterTable(table.fileIO, table.paths, [SchemaChanges.setOption('metadata.stats-mode', 'full')]);
    const altered = await openTable(table.location, { fileIO: table.fileIO });
    expect(await decodesOf(altered)).toBe(LAYOUT.length);
    // Whole string bounds now, which only the rows give: the longest `s` is over 16 characters.
    const [out] = await liveFileMetas(altered);
    expect(out!.meta.schemaId).toBe(1);
    expect(out!.meta.rowCount).toBe(LAYOUT.reduce((x, y) => x + y, 0));
  }, 120_000);

  it('fails on a large input whose footer does not parse, naming it, and leaves the table as it was', async () => {
    const table = await filled(new LocalFileIO(), 'zstd');
    const large = (await liveFileMetas(table)).find((f) => f.meta.rowCount === LARGE);
    // The footer length points before the file's start: the magic bytes stay, so only the footer is wrong.
    const bytes = await table.fileIO.read(large!.path);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(bytes.length - 8, bytes.length, true);
    await table.fileIO.write(large!.path, bytes);
    const snapshot = (await table.snapshotManager.latest())!.id;
    const before = await parquetFilesOnDisk(table);
    const error = await compactAppendTable(table, { full: true, copyRowGroups: true, copyRowGroupsMinRows: MIN_ROWS }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CorruptFileError);
    expect((error as Error).message).toContain(large!.meta.fileName);
    expect((await table.snapshotManager.latest())!.id).toBe(snapshot);
    expect(await parquetFilesOnDisk(table)).toEqual(before);
  }, 120_000);

  it('decodes a large input with a deletion vector, leaving its deleted row out', async () => {
    const table = await filled(new LocalFileIO(), 'zstd', undefined, { 'deletion-vectors.enabled': 'true' });
    // id 400 is in the first large input (ids 301–1,800).
    const { deleted } = await table.delete({ where: 'id = 400' });
    expect(deleted).toBe(1);
    expect(await decodesOf(table)).toBe(LAYOUT.filter((n) => n < MIN_ROWS).length + 1);
    const rows = await rowsInReadOrder(table);
    expect(rows).toHaveLength(LAYOUT.reduce((x, y) => x + y, 0) - 1);
    expect(rows.some((r) => r.startsWith('["400n"'))).toBe(false);
  }, 120_000);

  it("copies only when asked: the default rewrites every input, `tidemark compact --copy-row-groups` keeps large inputs' groups", async () => {
    // Inputs of 70,000 and 80,000 rows are one row group each (at least the default 65,536 rows).
    const sizes = [70_000, 80_000];
    const table = await createTable(
      { ...TYPED_SPEC, options: { bucket: '-1', 'compaction.min.file-num': '2' } },
      { fileIO: new LocalFileIO() },
    );
    let id = 0;
    for (const n of sizes) await table.append(Array.from({ length: n }, () => typedRow(++id, '2024-05-01')));
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-copy-cli-'));
    dirs.push(dir);
    const plain = await copyOf(table, join(dir, 'plain'));
    const groupsOf = async (t: Table): Promise<number[]> => {
      const [out, ...rest] = await liveFileMetas(await openTable(t.location, { fileIO: t.fileIO }));
      expect(rest).toHaveLength(0);
      return (await readParquetFooter(t.fileIO, out!.path)).rowGroups.map((g) => Number(g.numRows));
    };
    const copied = await runTidemark(['compact', table.location, '--full', '--copy-row-groups', '--json'], { timeoutMs: 120_000 });
    expect(copied.code, copied.stderr).toBe(0);
    // In the plan's order: unaware-bucket writers each number their rows from 0, as in Paimon.
    expect((await groupsOf(table)).sort()).toEqual(sizes);
    const rewritten = await compactAppendTable(plain, { full: true });
    expect(rewritten.snapshotId).not.toBeNull();
    const groups = await groupsOf(plain);
    expect(groups.reduce((x, y) => x + y, 0)).toBe(150_000);
    expect([...groups].sort()).not.toEqual(sizes);
  }, 180_000);
});
