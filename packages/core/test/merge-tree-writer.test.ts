import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { DataFileMeta } from '@tidemark/format';
import { FileSystemCatalog, openTable, TableWrite, type CompactManager } from '../src/index.js';

async function table(options: Record<string, string>) {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://mtw-${Math.random().toString(36).slice(2)}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

describe('MergeTreeWriter through TableWrite', () => {
  it('spills the write buffer as level-0 sorted runs, tells the compact manager, and commits its result', async () => {
    const t = await table({ 'write-buffer-size': '32 kb' });
    const flushed: DataFileMeta[][] = [];
    const replaced = { fileName: 'old.parquet' } as DataFileMeta;
    const manager: CompactManager = {
      onFlush: async (files) => void flushed.push([...files]),
      prepareCommit: async () => ({ compactBefore: [replaced], compactAfter: [] }),
    };
    const w = new TableWrite(t.context, { compactManager: () => manager, recordInflight: false });
    const rows = Array.from({ length: 400 }, (_, i) => ({ k: i % 150, v: `value-${i}` }));
    for (let i = 0; i < rows.length; i += 50) await w.write(rows.slice(i, i + 50));
    const [message, ...rest] = await w.prepareCommit();
    expect(rest).toEqual([]);
    expect(flushed.length).toBeGreaterThan(1);
    expect(message!.newFiles).toEqual(flushed.flat());
    expect(message!.compactBefore).toEqual([replaced]);
    expect(message!.compactAfter).toBeUndefined();
    // Runs follow each other in sequence order; each file is sorted with one record per key.
    let last = -1n;
    for (const f of message!.newFiles) {
      expect(f.level).toBe(0);
      expect(f.minSequenceNumber).toBeGreaterThan(last);
      last = f.maxSequenceNumber;
    }
    const total = message!.newFiles.reduce((n, f) => n + f.rowCount, 0);
    expect(total).toBeLessThan(400);
    expect(total).toBeGreaterThanOrEqual(150);
    await w.close();
  });

  it('abort deletes the flushed level-0 files and tells the compact manager', async () => {
    const t = await table({ 'write-buffer-size': '4 kb' });
    let aborted = false;
    const manager: CompactManager = {
      onFlush: async () => undefined,
      prepareCommit: async () => ({ compactBefore: [], compactAfter: [] }),
      abort: async () => void (aborted = true),
    };
    const w = new TableWrite(t.context, { compactManager: () => manager, recordInflight: false });
    await w.write(Array.from({ length: 300 }, (_, i) => ({ k: i, v: `v${i}` })));
    const files: string[] = [];
    for await (const st of t.fileIO.list(t.location)) if (st.path.endsWith('.parquet')) files.push(st.path);
    expect(files.length).toBeGreaterThan(0);
    await w.abort();
    expect(aborted).toBe(true);
    const left: string[] = [];
    for await (const st of t.fileIO.list(t.location)) if (st.path.endsWith('.parquet')) left.push(st.path);
    expect(left).toEqual([]);
  });
});
