/**
 * Reads of a few rows decoded page by page on the calling thread (parquet-page-decoder.ts): the
 * rows equal parquet-wasm's decode of the same rows for every column shape (nulls, dictionary and
 * plain pages of one chunk, every codec, types it leaves to parquet-wasm, Java-written files), and
 * a chunk's dictionary is decoded once per opened file, not once per read.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { CorruptFileError, ParquetDataFile, ParquetWorkerPool, writeParquetFile, type ParquetCompression } from '../src/index.js';
import { FIXTURES, HAVE_FIXTURES } from './fixtures.js';
import { CountingFileIO } from './helpers/counting-file-io.js';

const ROWS = 120_000;

/** Columns of every shape the page decoder reads, and two it leaves to parquet-wasm (bool, decimal). */
function table(withOthers: boolean): arrow.Table {
  const ids = new BigInt64Array(ROWS);
  const ts = new BigInt64Array(ROWS);
  const tsMicros = new BigInt64Array(ROWS);
  for (let i = 0; i < ROWS; i++) {
    ids[i] = BigInt(i * 3 - 1000);
    ts[i] = BigInt(1_700_000_000_000 + i * 1000);
    tsMicros[i] = BigInt(1_700_000_000_000_000 + (i % 5000) * 7);
  }
  // Unique strings overflow the 1 MiB dictionary: the chunk starts with dictionary pages and goes on plain.
  const names = Array.from({ length: ROWS }, (_, i) => (i % 10 === 3 ? null : `customer-${(i * 7919).toString(36).padStart(9, '0')}`));
  const columns: Record<string, arrow.Vector> = {
    id: arrow.makeVector(ids),
    name: arrow.vectorFromArray(names, new arrow.Utf8()),
    amount: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => (i % 17 === 0 ? null : ((i * 31) % 5000) / 4)),
      new arrow.Float64(),
    ),
    small: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => (i % 7) - 3),
      new arrow.Int8(),
    ),
    mid: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => (i % 3 === 0 ? null : (i % 3000) - 1500)),
      new arrow.Int16(),
    ),
    cat: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => (i % 11 === 0 ? null : i % 97)),
      new arrow.Int32(),
    ),
    ratio: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => i / 8),
      new arrow.Float32(),
    ),
    day: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => new Date(Date.UTC(2020, 0, 1) + (i % 900) * 86_400_000)),
      new arrow.DateDay(),
    ),
    ts: arrow.makeVector({ type: new arrow.TimestampMillisecond(), data: ts } as never),
    tsMicros: arrow.makeVector({ type: new arrow.TimestampMicrosecond(), data: tsMicros } as never),
    blob: arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => (i % 5 === 0 ? null : Uint8Array.of(i & 255, (i >> 8) & 255, 7))),
      new arrow.Binary(),
    ),
  };
  if (withOthers) {
    columns.flag = arrow.vectorFromArray(
      Array.from({ length: ROWS }, (_, i) => i % 3 === 0),
      new arrow.Bool(),
    );
  }
  return new arrow.Table(columns);
}

/** Row ranges across page boundaries, at both ends, one row and many. */
function ranges(rows: number, pageStarts: readonly number[]): [number, number][] {
  const out: [number, number][] = [
    [0, 1],
    [rows - 1, rows],
    [0, Math.min(rows, 25_000)],
  ];
  for (const p of pageStarts.slice(1, 6)) out.push([p - 1, p + 1], [p, p + 1], [p - 3, p]);
  const mid = Math.floor(rows / 2);
  out.push([mid, mid + 1], [mid - 700, mid + 700]);
  return out.filter(([a, b]) => a >= 0 && b <= rows && a < b);
}

/** Column values as plain JavaScript (bigints, numbers, strings, byte arrays as lists). */
function values(t: arrow.Table, column: string): unknown[] {
  const v = t.getChild(column)!;
  return Array.from({ length: t.numRows }, (_, i) => {
    const x = v.get(i) as unknown;
    return x instanceof Uint8Array ? [...x] : x;
  });
}

async function expectSameAsWasm(file: ParquetDataFile, group: number, start: number, end: number, columns?: string[]): Promise<void> {
  const opts = { rows: { start, end }, pool: false as const, ...(columns ? { columns } : {}) };
  const here = new arrow.Table(await file.decode([group], opts));
  const wasm = new arrow.Table(await file.decode([group], { ...opts, pageDecoder: false }));
  expect(here.numRows).toBe(end - start);
  expect(here.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual(
    wasm.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`),
  );
  for (const f of wasm.schema.fields) {
    expect(here.getChild(f.name)!.nullCount, `${f.name} nulls ${start}..${end}`).toBe(wasm.getChild(f.name)!.nullCount);
    expect(values(here, f.name), `${file.path} ${f.name} rows ${start}..${end}`).toEqual(values(wasm, f.name));
  }
}

describe('Parquet page decoder', () => {
  for (const compression of ['zstd', 'snappy', 'gzip', 'none'] as ParquetCompression[]) {
    it(`decodes rows as parquet-wasm does (${compression})`, async () => {
      const io = new CountingFileIO().put('t.parquet', writeParquetFile(table(false), { compression }));
      const file = await ParquetDataFile.open(io.asFileIO(), 't.parquet');
      const pages = (await file.columnPages(0, 'name'))!;
      expect(pages.pages.length).toBeGreaterThan(3);
      // Every shape of range for the default codec; the others only change how pages are decompressed.
      const all = ranges(
        ROWS,
        pages.pages.map((p) => p.firstRow),
      );
      for (const [a, b] of compression === 'zstd' ? all : all.slice(0, 6)) await expectSameAsWasm(file, 0, a, b);
      // The page decoder read them: it decoded dictionaries (parquet-wasm keeps none here).
      expect(file.dictionaryPagesDecoded).toBeGreaterThan(0);
      await expectSameAsWasm(file, 0, 1000, 1003, ['ts', 'blob', 'id']);
    });
  }

  it('reads the name column both from its dictionary pages and from the plain pages after the dictionary filled', async () => {
    const bytes = writeParquetFile(table(false));
    const io = new CountingFileIO().put('t.parquet', bytes);
    const file = await ParquetDataFile.open(io.asFileIO(), 't.parquet');
    const pages = (await file.columnPages(0, 'name'))!;
    expect(pages.dictionary).not.toBeNull();
    const first = pages.pages[0]!;
    const last = pages.pages[pages.pages.length - 1]!;
    // The dictionary filled before the last page: it is plain (no dictionary needed), the first one is not.
    await file.decode([0], { rows: { start: last.firstRow, end: last.firstRow + 2 }, columns: ['name'], pool: false });
    expect(file.dictionaryPagesDecoded).toBe(0);
    await file.decode([0], { rows: { start: first.firstRow + 1, end: first.firstRow + 2 }, columns: ['name'], pool: false });
    expect(file.dictionaryPagesDecoded).toBe(1);
  });

  it("decodes a chunk's dictionary once per opened file: later reads of other rows neither read nor decode it again", async () => {
    const io = new CountingFileIO().put('t.parquet', writeParquetFile(table(false)));
    const file = await ParquetDataFile.open(io.asFileIO(), 't.parquet');
    const pages = (await file.columnPages(0, 'amount'))!;
    expect(pages.dictionary).not.toBeNull();
    const read = (row: number) => file.decode([0], { rows: { start: row, end: row + 1 }, columns: ['amount'], pool: false });
    const retained = file.retainedBytes;
    await read(5);
    expect(file.dictionaryPagesDecoded).toBe(1);
    // Kept and counted in what the file retains (what a table's read cache bounds).
    expect(file.retainedBytes - retained).toBeGreaterThan(pages.dictionary!.size);
    const rows = pages.pages.map((p) => p.firstRow + 3);
    io.reset();
    for (const row of rows) {
      const got = new arrow.Table(await read(row));
      expect(values(got, 'amount')).toEqual([row % 17 === 0 ? null : ((row * 31) % 5000) / 4]);
    }
    expect(file.dictionaryPagesDecoded).toBe(1);
    // One ranged read per page at most, none of them the dictionary page.
    expect(io.rangeReads).toBeLessThanOrEqual(rows.length);
    expect(io.bytesRead).toBeLessThan(pages.pages.reduce((n, p) => n + p.size, 0) + 1);
  });

  it('leaves a read with a column it does not decode to parquet-wasm, with the same rows', async () => {
    const io = new CountingFileIO().put('t.parquet', writeParquetFile(table(true)));
    const file = await ParquetDataFile.open(io.asFileIO(), 't.parquet');
    await expectSameAsWasm(file, 0, 40_000, 40_010);
    expect(file.dictionaryPagesDecoded).toBe(0);
    // Without the boolean column the page decoder reads them.
    await expectSameAsWasm(file, 0, 40_000, 40_010, ['id', 'name', 'cat']);
    expect(file.dictionaryPagesDecoded).toBeGreaterThan(0);
  });

  it('reports a damaged page as a corrupt file, naming it', async () => {
    const bytes = writeParquetFile(table(false));
    const probe = await ParquetDataFile.open(new CountingFileIO().put('t.parquet', bytes).asFileIO(), 't.parquet');
    const page = (await probe.columnPages(0, 'id'))!.pages[2]!;
    const damaged = bytes.slice();
    for (let i = page.offset + 40; i < page.offset + page.size - 8; i += 7) damaged[i] = damaged[i]! ^ 0x5a;
    const file = await ParquetDataFile.open(new CountingFileIO().put('damaged.parquet', damaged).asFileIO(), 'damaged.parquet');
    const row = page.firstRow + 5;
    // parquet-wasm may trap on damaged bytes: on a worker, the trap ends the worker, not this thread.
    const pool = new ParquetWorkerPool({ size: 1 });
    try {
      const read = file.decode([0], { rows: { start: row, end: row + 1 }, columns: ['id'], pool });
      await expect(read).rejects.toBeInstanceOf(CorruptFileError);
      await expect(read).rejects.toThrow(/damaged\.parquet/);
    } finally {
      await pool.close();
    }
  });

  it.skipIf(!HAVE_FIXTURES)('decodes rows of Java-written data files as parquet-wasm does', async () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e);
        if (statSync(p).isDirectory()) walk(p);
        else if (e.endsWith('.parquet')) files.push(p);
      }
    };
    walk(FIXTURES);
    expect(files.length).toBeGreaterThan(0);
    let checked = 0;
    let dictionaries = 0;
    for (const path of files) {
      const io = new CountingFileIO().put(path, new Uint8Array(readFileSync(path)));
      const file = await ParquetDataFile.open(io.asFileIO(), path);
      for (const [g, extent] of file.rowGroups.entries()) {
        if (extent.rows === 0) continue;
        for (const [a, b] of [
          [0, extent.rows],
          [extent.rows - 1, extent.rows],
          [Math.floor(extent.rows / 2), Math.floor(extent.rows / 2) + 1],
        ] as const) {
          await expectSameAsWasm(file, g, a, b);
          checked++;
        }
      }
      dictionaries += file.dictionaryPagesDecoded;
    }
    expect(checked).toBeGreaterThan(0);
    // parquet-mr writes dictionary pages: the page decoder (not a fallback) read them.
    expect(dictionaries).toBeGreaterThan(0);
  });
});
