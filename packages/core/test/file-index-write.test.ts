/**
 * The write side of Paimon's data-file index: with `file-index.bloom-filter.columns` every new data
 * file of an append or primary-key table carries its index, embedded in the manifest entry up to
 * `file-index.in-manifest-threshold` bytes, else as a `<data file>.index` sidecar listed in
 * `_EXTRA_FILES`; options are checked as Paimon checks them.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileIndexFile, fileIndexMightContain, type DataFileMeta } from '@tidemark/format';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '../src/index.js';

let n = 0;
async function tableOf(spec: TableSpec): Promise<{ table: Table; io: MemoryFileIO }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://file-index-write-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return { table: await openTable(catalog.tableLocation('db.t'), { fileIO: io }), io };
}

async function liveFiles(table: Table): Promise<Array<{ meta: DataFileMeta; path: string }>> {
  const plan = await table.newRead().plan();
  return plan.splits.flatMap((s) => s.files.map((f) => ({ meta: f.meta, path: f.path })));
}

const FIELDS = [
  { name: 'id', type: 'INT NOT NULL' },
  { name: 's', type: 'STRING' },
  { name: 'price', type: 'DECIMAL(10, 2)' },
];

describe('file index on write', () => {
  for (const kind of ['append', 'primary-key'] as const) {
    it(`${kind}: a small index is embedded in the manifest entry and holds the file's values`, async () => {
      const { table } = await tableOf({
        fields: FIELDS,
        ...(kind === 'primary-key' ? { primaryKeys: ['id'] } : {}),
        options: {
          bucket: '1',
          ...(kind === 'append' ? { 'bucket-key': 'id' } : {}),
          'file-index.bloom-filter.columns': 'id,s',
          'file-index.bloom-filter.id.items': '100',
          'file-index.bloom-filter.s.items': '100',
        },
      });
      await table.append([
        { id: 1, s: 'a', price: null },
        { id: 2, s: null, price: null },
        { id: 3, s: 'c', price: null },
      ]);
      const [file] = await liveFiles(table);
      expect(file!.meta.extraFiles).toEqual([]);
      const index = FileIndexFile.parse(file!.meta.embeddedIndex!, file!.path);
      expect([...index.entries.keys()].sort()).toEqual(['id', 's']);
      const INT = table.schema().fields[0]!.type;
      const STRING = table.schema().fields[1]!.type;
      for (const id of [1, 2, 3]) expect(fileIndexMightContain(index, 'id', INT, [id])).toBe(true);
      expect(fileIndexMightContain(index, 's', STRING, ['a'])).toBe(true);
      expect(fileIndexMightContain(index, 's', STRING, ['c'])).toBe(true);
      // 100 items at fpp 0.1: 512 bits; of these absent values at least some are ruled out.
      const absent = Array.from({ length: 50 }, (_, i) => 1000 + i).filter((v) => !fileIndexMightContain(index, 'id', INT, [v]));
      expect(absent.length).toBeGreaterThan(25);
    });

    it(`${kind}: an index above the threshold is a '.index' sidecar listed in _EXTRA_FILES`, async () => {
      const { table, io } = await tableOf({
        fields: FIELDS,
        ...(kind === 'primary-key' ? { primaryKeys: ['id'] } : {}),
        // Paimon's default items (1,000,000) makes a ~600 KB filter: far above the 500 B threshold.
        options: { bucket: '1', ...(kind === 'append' ? { 'bucket-key': 'id' } : {}), 'file-index.bloom-filter.columns': 'id' },
      });
      await table.append([{ id: 7, s: 'x', price: null }]);
      const [file] = await liveFiles(table);
      expect(file!.meta.embeddedIndex).toBeNull();
      expect(file!.meta.extraFiles).toEqual([`${file!.meta.fileName}.index`]);
      const bytes = await io.read(`${file!.path}.index`);
      const index = FileIndexFile.parse(bytes, 'sidecar');
      expect(index.entries.get('id')!.get('bloom-filter')!.length).toBe(4 + 4_792_576 / 8);
      expect(fileIndexMightContain(index, 'id', table.schema().fields[0]!.type, [7])).toBe(true);
    });
  }

  it('a table without the option writes no index', async () => {
    const { table } = await tableOf({ fields: FIELDS, options: {} });
    await table.append([{ id: 1, s: 'a', price: null }]);
    const [file] = await liveFiles(table);
    expect(file!.meta.embeddedIndex).toBeNull();
    expect(file!.meta.extraFiles).toEqual([]);
  });

  it('refuses options Paimon refuses, naming the option and column', async () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ 'file-index.bloom-filter.columns': 'id,nope' }, /file-index\.bloom-filter\.columns.*'nope'.*not a column/],
      [{ 'file-index.bloom-filter.columns': 'price' }, /file-index\.bloom-filter\.columns.*'price'.*DECIMAL.*does not support/],
      [{ 'file-index.bloom-filter.columns': 'id,' }, /file-index\.bloom-filter\.columns.*empty column/],
      [
        { 'file-index.bloom-filter.columns': 'id', 'file-index.bloom-filter.s.items': '10' },
        /file-index\.bloom-filter\.s\.items.*'s'.*does not list/,
      ],
      [
        { 'file-index.bloom-filter.columns': 'id', 'file-index.bloom-filter.id.items': '0' },
        /file-index\.bloom-filter\.id\.items.*positive integer/,
      ],
      [{ 'file-index.bloom-filter.columns': 'id', 'file-index.bloom-filter.id.fpp': '1.5' }, /file-index\.bloom-filter\.id\.fpp.*\(0, 1\)/],
      [{ 'file-index.read.enabled': 'maybe' }, /file-index\.read\.enabled/],
      [{ 'file-index.in-manifest-threshold': 'lots' }, /file-index\.in-manifest-threshold/],
    ];
    for (const [options, message] of bad) {
      await expect(tableOf({ fields: FIELDS, options })).rejects.toThrow(message);
    }
  });
});
