/**
 * The min/max statistics of 64-bit columns (BIGINT, TIMESTAMP) are computed without a BigInt per
 * value, from 32-bit halves; they must order negative values, values across the 2^32 boundary and
 * the int64 extremes exactly. Checked through what statistics are for: a filter on the smallest or
 * largest value keeps the file, a filter just outside them skips it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog } from '../src/index.js';

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

describe('min/max statistics of 64-bit columns', () => {
  it('bound the values exactly, so filters at the bounds keep the file and filters beyond skip it', async () => {
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://stats-int64-${process.pid}/wh`, { fileIO: io });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'BIGINT' },
        { name: 'ts', type: 'TIMESTAMP(6)' },
      ],
    });
    const table = await catalog.getTable('db.t');
    // File 1: mixed signs around ±2^32; its min is -4294967297, its max 4294967296.
    const mixed = [5n, -1n, 4294967296n, -4294967297n, 4294967295n, -4294967296n, 0n, null];
    await table.append(mixed.map((id, i) => ({ id, ts: i === 7 ? null : `2024-01-0${i + 1} 00:00:00.00000${i}` })));
    // Files 2 and 3: from the int64 extremes to ∓2^53.
    await table.append([{ id: -(2n ** 53n) }, { id: I64_MIN }]);
    await table.append([{ id: I64_MAX }, { id: 2n ** 53n }]);
    const files = async (where: string): Promise<number> => (await table.newRead({ where }).plan()).files().length;
    const rows = async (where: string): Promise<number> => (await table.newRead({ where }).toArrowTable()).numRows;

    expect(await files('id = -4294967297')).toBe(1);
    expect(await rows('id = -4294967297')).toBe(1);
    expect(await files('id = 4294967296')).toBe(1);
    expect(await files('id > 4294967296 AND id < 100000000000')).toBe(0);
    expect(await files('id < -4294967297 AND id > -100000000000')).toBe(0);
    expect(await files(`id = ${I64_MIN}`)).toBe(1);
    expect(await rows(`id = ${I64_MAX}`)).toBe(1);
    expect(await files('id = -9007199254740993')).toBe(1); // only file 2's range holds -(2^53) - 1
    expect(await files('id = 9007199254740991')).toBe(0); // between file 1's max and file 3's min
    expect(await files("ts = TIMESTAMP '2024-01-01 00:00:00.000000'")).toBe(1);
    expect(await files("ts = TIMESTAMP '2024-01-07 00:00:00.000006'")).toBe(1);
    expect(await files("ts > TIMESTAMP '2024-01-07 00:00:00.000006'")).toBe(0);
    expect(await files("ts < TIMESTAMP '2024-01-01 00:00:00'")).toBe(0);
  });
});
