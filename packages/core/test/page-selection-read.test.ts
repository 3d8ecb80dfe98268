/**
 * Reads of large row groups through their page index: a key filter decodes only the rows of the
 * pages that may hold its keys. The rows must equal the model (merge-on-read on a primary-key
 * table; deletion vectors on an append table, whose positions count from the file's first row),
 * and a one-key lookup must read a fraction of the bytes a full read does.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '../src/index.js';
import { PAGE_SELECT_MIN_ROWS } from '../src/read/page-filter.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

/** Rows of the large write: one row group of more than PAGE_SELECT_MIN_ROWS rows (checked below). */
const ROWS = 282_144;

function countingBytes(inner: FileIO): { io: FileIO; take(): number } {
  let bytes = 0;
  const io = new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'readRange' || prop === 'read') {
        return async (...args: unknown[]) => {
          const out = (await (v as (...a: unknown[]) => Promise<Uint8Array>).apply(target, args)) as Uint8Array;
          if (String(args[0]).includes('/bucket-')) bytes += out.byteLength;
          return out;
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    io,
    take: () => {
      const b = bytes;
      bytes = 0;
      return b;
    },
  };
}

let n = 0;
async function tableOf(spec: TableSpec, io: FileIO): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://page-selection-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

function rowsOf(count: number, offset = 0): Array<{ id: bigint; name: string; amount: number }> {
  return Array.from({ length: count }, (_, k) => {
    const i = k + offset;
    return { id: BigInt(i * 2), name: `customer-${i.toString(36).padStart(8, '0')}`, amount: (i * 7919) % 1000 };
  });
}

async function ids(table: Table, where: string): Promise<string[]> {
  const t = await table.newRead({ where }).toArrowTable();
  return t
    .toArray()
    .map((r) => {
      const row = r.toJSON() as { id: bigint; name: string };
      return `${row.id}:${row.name}`;
    })
    .sort();
}

const expectRow = (i: number, name = `customer-${i.toString(36).padStart(8, '0')}`): string => `${BigInt(i * 2)}:${name}`;

/** The columns of the primary-key tables below. */
const ID_NAME_AMOUNT = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'name', type: 'STRING' },
  { name: 'amount', type: 'DOUBLE' },
];

/** Row `i` after the second append of the first test, which renamed rows 1000..1004. */
const latestRow = (i: number): string => (1000 <= i && i < 1005 ? expectRow(i, `updated-${i * 2}`) : expectRow(i));

describe('reads through the page index of large row groups', () => {
  it('primary-key table: lookups and IN lists return the merged rows, reading a fraction of the data', async () => {
    const counter = countingBytes(new MemoryFileIO());
    const table = await tableOf(
      {
        fields: ID_NAME_AMOUNT,
        primaryKeys: ['id'],
        // No decoded rows kept between lookups: each lookup reads what it decodes.
        options: { bucket: '1', 'write-only': 'true', 'lookup.cache-max-memory-size': '1 b' },
      },
      counter.io,
    );
    await table.append(rowsOf(ROWS));
    // Newer versions of a few keys in a second file, so that the merge decides.
    await table.append(rowsOf(5, 1000).map((r) => ({ ...r, name: `updated-${r.id}` })));
    const files = (await table.newRead().plan()).splits.flatMap((s) => s.files);
    expect(files.some((f) => f.meta.rowCount === ROWS)).toBe(true);
    expect(ROWS).toBeGreaterThan(PAGE_SELECT_MIN_ROWS);
    const fileBytes = files.reduce((sum, f) => sum + f.meta.fileSize, 0);
    const random = seededRandom(26);
    for (let k = 0; k < 20; k++) {
      const i = Math.floor(random() * ROWS);
      expect(await ids(table, `id = ${i * 2}`), `id ${i * 2}`).toEqual([latestRow(i)]);
      expect(await ids(table, `id = ${i * 2 + 1}`)).toEqual([]);
    }
    // A fresh Table (nothing decoded kept): its first lookup reads the footers, the next one only pages.
    const fresh = await openTable(table.location, { fileIO: counter.io });
    await ids(fresh, 'id = 2');
    counter.take();
    expect(await ids(fresh, `id = ${(ROWS - 7) * 2}`)).toEqual([expectRow(ROWS - 7)]);
    const lookupBytes = counter.take();
    // The row group is the whole file: one page per column (and the dictionary pages) is far less.
    expect(lookupBytes, `bytes of a one-key lookup (file: ${fileBytes} bytes)`).toBeLessThan(fileBytes / 4);
    const some = [0, 1001, 1004, 77_777, 131_072, ROWS - 1, ROWS + 3];
    expect(await ids(table, `id IN (${some.map((i) => i * 2).join(', ')})`)).toEqual(
      some
        .filter((i) => i < ROWS)
        .map(latestRow)
        .sort(),
    );
    expect(await ids(table, `id >= ${(ROWS - 3) * 2}`)).toEqual([ROWS - 3, ROWS - 2, ROWS - 1].map((i) => expectRow(i)).sort());
  });

  it('primary-key table with deletion vectors: a key probe of the pages keeps deleted rows deleted', async () => {
    const io = new MemoryFileIO();
    const table = await tableOf(
      {
        fields: ID_NAME_AMOUNT,
        primaryKeys: ['id'],
        options: { bucket: '1', 'deletion-vectors.enabled': 'true', 'lookup.cache-max-memory-size': '1 b' },
      },
      io,
    );
    await table.append(rowsOf(ROWS));
    const deleted = [3, 150_001, 131_077, ROWS - 2];
    // Deleting keys of the compacted file marks its rows in a deletion vector.
    await table.delete(deleted.map((i) => ({ id: BigInt(i * 2) })));
    const big = (await table.newRead().plan()).splits.flatMap((s) => s.files).find((f) => f.meta.rowCount === ROWS);
    expect(big?.meta.level).toBeGreaterThan(0);
    for (const i of [...deleted, 4, 150_000, 131_078, 200_000, ROWS - 1]) {
      expect(await ids(table, `id = ${i * 2}`), `id ${i * 2}`).toEqual(deleted.includes(i) ? [] : [expectRow(i)]);
    }
    expect(await ids(table, `id IN (${[2, 3, 4, 131_077, 131_078].map((i) => i * 2).join(', ')})`)).toEqual(
      [2, 4, 131_078].map((i) => expectRow(i)).sort(),
    );
  });

  it('append table with deletion vectors: rows deleted by vector stay deleted in the pages read', async () => {
    const io = new MemoryFileIO();
    const table = await tableOf(
      {
        fields: ID_NAME_AMOUNT,
        options: { 'deletion-vectors.enabled': 'true' },
      },
      io,
    );
    await table.append(rowsOf(ROWS));
    const deleted = [3, 150_001, 131_077, ROWS - 2];
    await table.delete({ where: `id IN (${deleted.map((i) => i * 2).join(', ')})` });
    for (const i of [...deleted, 4, 150_000, 131_078, ROWS - 1]) {
      expect(await ids(table, `id = ${i * 2}`), `id ${i * 2}`).toEqual(deleted.includes(i) ? [] : [expectRow(i)]);
    }
    expect(await ids(table, `id > ${(ROWS - 4) * 2}`)).toEqual([ROWS - 3, ROWS - 1].map((i) => expectRow(i)).sort());
  });
});
