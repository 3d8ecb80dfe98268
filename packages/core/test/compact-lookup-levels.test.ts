/**
 * LookupLevels: point lookups of keys in levels ≥ 1 of one bucket return the live record of the
 * lowest level that has the key, with its file and row position; rows a deletion vector marks
 * deleted are skipped; lookups start at the given level; files compacted away are not found.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { DataFileMeta } from '@tidemark/format';
import { FileSystemCatalog, openTable, type Table } from '../src/index.js';
import { Levels } from '../src/compact/levels.js';
import { LookupLevels } from '../src/compact/lookup-levels.js';
import { binaryRowKeyComparator } from '../src/compact/sorted-run.js';
import { trimmedKeyFields } from '../src/write/key-value/key-value.js';

async function table(): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://lookup-levels-${process.pid}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'write-only': 'true' },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

describe('LookupLevels', () => {
  it('finds the newest live record of a key in levels >= 1 with its file, position and level', async () => {
    const t = await table();
    await t.append(Array.from({ length: 100 }, (_, i) => ({ k: i * 2, v: `old-${i * 2}` }))); // even keys 0..198
    await t.append([10, 20, 21, 30].map((k) => ({ k, v: `new-${k}` })));
    const plan = await t.newRead().plan();
    const files = plan.splits[0]!.files.map((f) => f.meta);
    const older = files.find((f) => f.rowCount === 100)!;
    const newer = files.find((f) => f.rowCount === 4)!;
    // Place them as a compaction would have: the newer file above the older one.
    const placed: DataFileMeta[] = [
      { ...newer, level: 1 },
      { ...older, level: 3 },
    ];
    const schema = t.context.schema;
    const keyFields = trimmedKeyFields(schema);
    const levels = new Levels(placed, 4, binaryRowKeyComparator(keyFields.map((f) => f.type)));
    const deleted = new Set<string>();
    const lookup = new LookupLevels(levels, {
      fileIO: t.fileIO,
      pathOf: (name) => plan.splits[0]!.files.find((f) => f.meta.fileName === name)!.path,
      schemaOf: async () => schema,
      readFields: schema.fields,
      keyFields,
      isDeleted: (file, pos) => deleted.has(`${file}|${pos}`),
      maxCachedRows: 50,
    });

    const r20 = await lookup.lookup([20]);
    expect(r20).toMatchObject({ row: [20, 'new-20'], level: 1, position: 1, kind: 0 });
    expect(r20!.file.fileName).toBe(newer.fileName);

    const r40 = await lookup.lookup([40]);
    expect(r40).toMatchObject({ row: [40, 'old-40'], level: 3, position: 20 });
    expect(r40!.file.fileName).toBe(older.fileName);
    expect(await lookup.lookup([41])).toBeNull();
    expect(await lookup.lookup([21])).toMatchObject({ row: [21, 'new-21'], level: 1 });

    // Starting above level 1 skips the newer record.
    expect(await lookup.lookup([20], 2)).toMatchObject({ row: [20, 'old-20'], level: 3, position: 10 });

    // A row marked deleted is skipped: the lookup goes on to the next level.
    deleted.add(`${newer.fileName}|1`);
    expect(await lookup.lookup([20])).toMatchObject({ row: [20, 'old-20'], level: 3 });
    deleted.add(`${older.fileName}|10`);
    expect(await lookup.lookup([20])).toBeNull();

    // After a compaction removed the newer file, its keys come from the older one only.
    levels.update([{ ...newer, level: 1 }], []);
    lookup.forget([newer]);
    expect(await lookup.lookup([30])).toMatchObject({ row: [30, 'old-30'], level: 3 });
    expect(await lookup.lookup([21])).toBeNull();
  });
});
