import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList, type ManifestEntry } from '@tidemark/format';
import { FileSystemCatalog, openTable, readDataFile, type Table } from '../src/index.js';

let n = 0;
async function table(options: Record<string, string> = {}): Promise<{ t: Table; io: MemoryFileIO }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://changelog-input-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'changelog-producer': 'input', ...options },
  });
  return { t: await openTable(catalog.tableLocation('db.t'), { fileIO: io }), io };
}

async function changelogEntries(t: Table, io: MemoryFileIO, id: number): Promise<ManifestEntry[]> {
  const s = await t.snapshotManager.snapshot(id);
  if (!s.changelogManifestList) return [];
  const out: ManifestEntry[] = [];
  for (const m of await readManifestList(io, t.paths.manifestPath(s.changelogManifestList))) {
    for await (const e of readManifestEntries(io, t.paths.manifestPath(m.fileName))) out.push(e);
  }
  return out;
}

const KINDS = ['+I', '-U', '+U', '-D'];

describe("changelog-producer = 'input'", () => {
  it('writes the input rows unmerged with their row kinds to changelog files of the APPEND snapshot', async () => {
    const { t, io } = await table();
    await t.append(
      [
        { k: 2, v: 'b', op: '+I' },
        { k: 1, v: 'a', op: '+I' },
        { k: 1, v: 'a', op: '-U' },
        { k: 1, v: 'a2', op: '+U' },
        { k: 3, v: 'c', op: '+I' },
        { k: 3, v: 'c', op: '-D' },
      ],
      { rowKindField: 'op' },
    );
    const s = await t.snapshotManager.snapshot(1);
    expect(s.commitKind).toBe('APPEND');
    expect(s.changelogManifestList).toMatch(/^manifest-list-/);
    expect(s.changelogManifestListSize).toBeGreaterThan(0);
    expect(s.changelogRecordCount).toBe(6);
    const entries = await changelogEntries(t, io, 1);
    expect(entries).toHaveLength(1);
    const e = entries[0]!;
    expect(e.kind).toBe('ADD');
    expect(e.file.fileName).toMatch(/^changelog-[0-9a-f-]{36}-\d+\.parquet$/);
    expect(e.file.level).toBe(0);
    expect(e.file.fileSource).toBe(0);
    expect(e.file.rowCount).toBe(6);
    expect(e.file.deleteRowCount).toBe(2);
    // Same bucket directory as the data files.
    const path = t.paths.dataFilePath(e.partition, e.bucket, e.file.fileName);
    expect(path).toMatch(/\/bucket-0\/changelog-/);
    const rows: string[] = [];
    const schema = t.schema();
    for await (const b of readDataFile(io, { path, fileSize: e.file.fileSize, schema }, schema.fields, { keyValue: true })) {
      for (let i = 0; i < b.batch.numRows; i++) {
        const r = b.batch.get(i)!.toJSON();
        rows.push(`${KINDS[b.valueKind![i]!]} ${r.k} ${r.v} #${b.sequence![i]}`);
      }
    }
    // Key order, then arrival (sequence) order; nothing merged.
    expect(rows).toEqual(['+I 1 a #1', '-U 1 a #2', '+U 1 a2 #3', '+I 2 b #0', '+I 3 c #4', '-D 3 c #5']);
    // The data files hold the merged state only.
    const data = (await t.newRead().toArrowTable()).toArray().map((r) => r.toJSON());
    expect(data.map((r) => `${r.k}=${r.v}`).sort()).toEqual(['1=a2', '2=b']);
  });

  it('snapshots without changelog files carry none, and a table without producer writes none', async () => {
    const { t, io } = await table({ 'changelog-producer': 'none' });
    await t.append([{ k: 1, v: 'a' }]);
    const s = await t.snapshotManager.snapshot(1);
    expect(s.changelogManifestList ?? null).toBeNull();
    expect(await changelogEntries(t, io, 1)).toEqual([]);
    const names: string[] = [];
    for await (const f of io.list(t.paths.root, { recursive: true })) names.push(f.path);
    expect(names.some((p) => /\/data-[^/]*\.parquet$/.test(p))).toBe(true);
    expect(names.some((p) => /\/changelog-[^/]*\.parquet$/.test(p))).toBe(false);
  });
});
