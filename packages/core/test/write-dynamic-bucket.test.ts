import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER } from '@tidemark/format';
import { FileSystemCatalog, listInflightRecords, openTable, type Table } from '../src/index.js';

let n = 0;
async function dynamicTable(options: Record<string, string> = {}): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dyn-write-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options,
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function indexFiles(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const st of t.fileIO.list(t.context.paths.indexDir)) out.push(st.path.slice(st.path.lastIndexOf('/') + 1));
  return out.sort();
}

describe('TableWrite on dynamic-bucket tables', () => {
  it('hands out hash index files with its messages, protected by its in-flight record until committed', async () => {
    const t = await dynamicTable({ 'dynamic-bucket.target-row-num': '2' });
    const w = t.newBatchWrite();
    await w.write([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    const messages = await w.prepareCommit();
    expect(messages.map((m) => [m.bucket, m.totalBuckets, m.indexBaseSnapshotId]).sort()).toEqual([
      [0, -1, null],
      [1, -1, null],
    ]);
    const index = messages.flatMap((m) => m.newIndexFiles ?? []);
    expect(index.map((f) => [f.indexType, f.rowCount]).sort()).toEqual([
      ['HASH', 1],
      ['HASH', 2],
    ]);
    const prefixes: string[] = [];
    for await (const r of listInflightRecords(t.fileIO, t.location)) prefixes.push(...r.record.prefixes);
    for (const f of index)
      expect(
        prefixes.some((p) => f.fileName.startsWith(p)),
        f.fileName,
      ).toBe(true);
    const r = await t.newCommit().commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages });
    expect(r.status).toBe('committed');
    await w.close();
    expect(await indexFiles(t)).toEqual(index.map((f) => f.fileName).sort());
  });

  it('discard (after a refused commit) deletes the index files along with the data files', async () => {
    const t = await dynamicTable();
    const w = t.newBatchWrite();
    await w.write([{ k: 1, v: 'a' }]);
    await w.prepareCommit();
    expect(await indexFiles(t)).toHaveLength(1);
    // Files handed out by prepareCommit stay until discarded (their commit might be pending).
    const w2 = t.newBatchWrite();
    await w2.write([{ k: 2, v: 'b' }]);
    const m2 = await w2.prepareCommit();
    await w2.discard(m2);
    await w2.close();
    expect(await indexFiles(t)).toHaveLength(1);
    await w.close();
  });
});
