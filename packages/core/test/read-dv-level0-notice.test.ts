/**
 * A batch read of a deletion-vector primary-key table skips level-0 files, as Paimon's does: a
 * time-travel read of a write's own APPEND snapshot shows none of its rows (they appear with the
 * COMPACT snapshot that follows). The read keeps that behaviour but says so through the table's
 * logger, once per read, naming the snapshot and the rows it does not show.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table } from '../src/index.js';

let n = 0;
async function dvTable(options: Record<string, string> = {}): Promise<{ table: Table; warnings: string[] }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dv-notice-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'deletion-vectors.enabled': 'true', ...options },
  });
  const warnings: string[] = [];
  const table = await openTable(catalog.tableLocation('db.t'), { fileIO: io, logger: { warn: (m) => warnings.push(m) } });
  return { table, warnings };
}

const count = async (t: Table, snapshotId?: number): Promise<number> =>
  (await t.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable()).numRows;

describe('deletion-vector tables: reads that skip level-0 files say so', () => {
  it('time travel to the APPEND snapshot of a write: no rows, and a notice naming the snapshot and the rows', async () => {
    const { table, warnings } = await dvTable();
    await table.append([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    const kinds = await Promise.all([1, 2].map(async (id) => (await table.snapshotManager.snapshot(id)).commitKind));
    expect(kinds).toEqual(['APPEND', 'COMPACT']);
    await table.newRead({ snapshotId: 1 }).plan(); // planning alone (writers, compaction) says nothing
    expect(warnings).toEqual([]);
    expect(await count(table, 1)).toBe(0); // as in Java
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /snapshot 1 .*3 rows in 1 level-0 file .*not visible to batch reads of a deletion-vector table until compacted .*COMPACT snapshot/,
    );
    warnings.length = 0;
    expect(await count(table, 2)).toBe(3);
    expect(await count(table)).toBe(3);
    expect(warnings).toEqual([]);
  });

  it('a latest read of a write-only table whose level-0 files wait for compaction says so too', async () => {
    const { table, warnings } = await dvTable({ 'write-only': 'true' });
    await table.append([{ k: 1, v: 'a' }]);
    expect(await count(table)).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/snapshot 1 .*1 row in 1 level-0 file .*not visible .*until compacted .*tidemark compact/);
  });
});
