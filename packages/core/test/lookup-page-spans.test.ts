/**
 * What a key lookup in a large row group reads: primary-key files carry no dictionary on the
 * columns unique in a file (a single-column key, its value column, the sequence number), so a
 * lookup does not decode a dictionary page to read one row of them; and an opened file keeps the
 * page spans its page reads fetched (dictionary pages, the key page a probe reads twice), so a
 * later lookup in the same pages reads no data bytes again. Rows must stay those of the model.
 */
import { describe, expect, it } from 'vitest';
import { ParquetDataFile } from '@tidemark/format';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '../src/index.js';
import { PAGE_SELECT_MIN_ROWS } from '../src/read/page-filter.js';
import { countingRequests } from './helpers.js';

let n = 0;
async function tableOf(spec: TableSpec, io: FileIO): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://page-spans-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

/** Whether column `column` of the first row group of every live data file has a dictionary page. */
async function dictionaries(table: Table, io: FileIO, column: string): Promise<boolean[]> {
  const files = (await table.newRead().plan()).splits.flatMap((s) => s.files);
  expect(files.length).toBeGreaterThan(0);
  const out: boolean[] = [];
  for (const f of files) {
    const pages = await (await ParquetDataFile.open(io, f.path)).columnPages(0, column);
    expect(pages, `${column} of ${f.path} has an offset index`).not.toBeNull();
    out.push(pages!.dictionary !== null);
  }
  return out;
}

describe('primary-key files: no dictionary on the columns unique in a file', () => {
  it('single-column key: _KEY_id, id and _SEQUENCE_NUMBER are plain; a repeating value column keeps its dictionary', async () => {
    const io = new MemoryFileIO();
    const table = await tableOf(
      {
        fields: [
          { name: 'id', type: 'BIGINT NOT NULL' },
          { name: 'cat', type: 'INT' },
        ],
        primaryKeys: ['id'],
        options: { bucket: '1' },
      },
      io,
    );
    await table.append(Array.from({ length: 5000 }, (_, i) => ({ id: BigInt(i), cat: i % 7 })));
    for (const column of ['_KEY_id', 'id', '_SEQUENCE_NUMBER']) expect(await dictionaries(table, io, column), column).not.toContain(true);
    for (const column of ['cat', '_VALUE_KIND']) expect(await dictionaries(table, io, column), column).not.toContain(false);
    const t = await table.newRead({ where: 'id = 4321' }).toArrowTable();
    expect(t.toArray().map((r) => (r.toJSON() as { cat: number }).cat)).toEqual([4321 % 7]);
  });

  it('composite key: its columns may repeat and keep their dictionary', async () => {
    const io = new MemoryFileIO();
    const table = await tableOf(
      {
        fields: [
          { name: 'tenant', type: 'INT NOT NULL' },
          { name: 'id', type: 'BIGINT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        primaryKeys: ['tenant', 'id'],
        options: { bucket: '1' },
      },
      io,
    );
    await table.append(Array.from({ length: 3000 }, (_, i) => ({ tenant: i % 3, id: BigInt(i), v: `v${i % 5}` })));
    expect(await dictionaries(table, io, '_KEY_tenant')).not.toContain(false);
    expect(await dictionaries(table, io, '_SEQUENCE_NUMBER')).not.toContain(true);
  });
});

describe('an opened file keeps the page spans of its page reads', () => {
  it('a second lookup in the same pages of a large row group reads no data file bytes, and finds the right rows', async () => {
    const counter = countingRequests(new MemoryFileIO(), (r) => (String(r.path).includes('/bucket-') ? 'data' : 'other'));
    const rows = 200_000;
    const table = await tableOf(
      {
        fields: [
          { name: 'id', type: 'BIGINT NOT NULL' },
          { name: 'name', type: 'STRING' },
          { name: 'grade', type: 'INT' },
        ],
        primaryKeys: ['id'],
        // No decoded rows kept between lookups: what a lookup does not re-read comes from the kept spans.
        options: { bucket: '1', 'lookup.cache-max-memory-size': '1 b' },
      },
      counter.io,
    );
    await table.append(Array.from({ length: rows }, (_, i) => ({ id: BigInt(i * 3), name: `n-${i}`, grade: i % 11 })));
    const files = (await table.newRead().plan()).splits.flatMap((s) => s.files);
    expect(files.map((f) => f.meta.rowCount)).toEqual([rows]);
    expect(rows).toBeGreaterThan(PAGE_SELECT_MIN_ROWS);
    const lookup = async (i: number): Promise<unknown[]> =>
      (await table.newRead({ where: `id = ${i * 3}` }).toArrowTable()).toArray().map((r) => {
        const row = r.toJSON() as { id: bigint; name: string; grade: number };
        return [row.id, row.name, row.grade];
      });
    // The footer and page index first.
    expect(await lookup(10)).toEqual([[30n, 'n-10', 10 % 11]]);
    counter.take();
    expect(await lookup(150_001)).toEqual([[450_003n, 'n-150001', 150_001 % 11]]);
    const first = counter.take()['data'] ?? 0;
    expect(first).toBeGreaterThan(0);
    // A neighbour in the same pages: every span it needs was kept.
    expect(await lookup(150_002)).toEqual([[450_006n, 'n-150002', 150_002 % 11]]);
    expect(counter.take()['data'] ?? 0).toBe(0);
    // An absent key between them reads nothing either, and finds nothing.
    expect((await table.newRead({ where: `id = ${150_001 * 3 + 1}` }).toArrowTable()).numRows).toBe(0);
    expect(counter.take()['data'] ?? 0).toBe(0);
  });
});
