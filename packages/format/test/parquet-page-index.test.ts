/**
 * Page indexes of the files tidemark writes (column index and offset index, as parquet-mr writes
 * them for Java Paimon) and reads of a row range of one row group: the rows equal the same slice
 * of the whole group, on a worker and on this thread, and only the pages holding them are read.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { ParquetDataFile, ParquetWorkerPool, writeParquetFile } from '../src/index.js';

const ROWS = 150_000;

function table(): arrow.Table {
  const ids = new BigInt64Array(ROWS);
  for (let i = 0; i < ROWS; i++) ids[i] = BigInt(i * 3);
  const names = Array.from({ length: ROWS }, (_, i) => (i % 10 === 0 ? null : `customer-${i.toString(36).padStart(8, '0')}`));
  const amounts = Float64Array.from({ length: ROWS }, (_, i) => (i * 7919) % 1000);
  return new arrow.Table({
    id: arrow.makeVector(ids),
    name: arrow.vectorFromArray(names, new arrow.Utf8()),
    amount: arrow.makeVector(amounts),
  });
}

/** A FileIO counting the bytes of ranged reads. */
function counting(inner: FileIO): { io: FileIO; bytes(): number } {
  let bytes = 0;
  const io = new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'readRange') {
        return async (path: string, offset: number, length: number) => {
          const out = await target.readRange(path, offset, length);
          bytes += out.byteLength;
          return out;
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { io, bytes: () => bytes };
}

describe('Parquet page index', () => {
  const bytes = writeParquetFile(table());
  const path = 'memory://page-index/file.parquet';

  it('is written for every column: contiguous pages, and bounds holding every value of each page', async () => {
    const io = new MemoryFileIO();
    await io.write(path, bytes);
    const file = await ParquetDataFile.open(io, path);
    expect(file.rowGroups.length).toBe(1);
    const all = (await file.decode([0], { pool: false }))[0]!;
    for (const column of ['id', 'name', 'amount']) {
      const pages = (await file.columnPages(0, column))!;
      expect(pages, column).not.toBeNull();
      expect(pages.pages.length, column).toBeGreaterThan(3);
      expect(pages.stats?.length, column).toBe(pages.pages.length);
      expect(pages.pages[0]!.firstRow).toBe(0);
      const values = all.getChild(column)!;
      pages.pages.forEach((p, i) => {
        const end = pages.pages[i + 1]?.firstRow ?? ROWS;
        expect(end, column).toBeGreaterThan(p.firstRow);
        const s = pages.stats![i]!;
        for (let r = p.firstRow; r < end; r += 997) {
          const v = values.get(r) as unknown;
          if (v === null) continue;
          // Bounds and values are numbers, bigints or strings of one column: JavaScript orders each kind.
          const le = (a: unknown, b: unknown): boolean => (a as number) <= (b as number);
          expect(le(s.min, v) && le(v, s.max), `${column} row ${r} in page ${i}`).toBe(true);
        }
      });
    }
  });

  for (const where of ['a worker', 'this thread'] as const) {
    it(`decodes a row range on ${where} as the same slice of the whole group, reading only its pages`, async () => {
      const counter = counting(new MemoryFileIO());
      await counter.io.write(path, bytes);
      const pool = where === 'a worker' ? new ParquetWorkerPool({ size: 1 }) : false;
      try {
        const file = await ParquetDataFile.open(counter.io, path, { fileSize: bytes.length });
        const whole = (await file.decode([0], { pool: false }))[0]!;
        let before = counter.bytes();
        await file.decode([0], { pool, columns: ['id', 'name'] });
        const group = counter.bytes() - before;
        for (const [start, end] of [
          [0, 1],
          [75_000, 75_001],
          [63_456, 80_000],
          [ROWS - 5, ROWS],
          [0, ROWS],
        ] as const) {
          before = counter.bytes();
          // parquet-wasm's page reads (the page decoder has its own tests: parquet-page-decoder.test.ts).
          const got = new arrow.Table(await file.decode([0], { pool, rows: { start, end }, columns: ['id', 'name'], pageDecoder: false }));
          expect(got.numRows).toBe(end - start);
          const expected = whole.slice(start, end);
          for (const c of ['id', 'name'])
            expect(got.getChild(c)!.toArray(), `${c} ${start}..${end}`).toEqual(expected.getChild(c)!.toArray());
          // One row: its page of each column (and the dictionary page of 'name'), not the column chunks.
          if (end - start === 1) expect(counter.bytes() - before, `bytes read for one row at ${start}`).toBeLessThan(group / 2);
        }
      } finally {
        if (pool) await pool.close();
      }
    });
  }
});
