/**
 * TableWrite with `streamRowGroupRows` (append tables): row groups are encoded while rows still
 * arrive. The files hold the rows and statistics the buffered writer writes, in input order, with
 * row groups of the asked size; files still end near target-file-size with contiguous sequence
 * numbers; abort() drops what is being encoded and leaves no file behind.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it, vi } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import {
  conformToPaimonTypes,
  readParquetFile,
  readParquetFooter,
  sharedParquetWorkerPool,
  utf8Vector,
  type TableSchema,
} from '@tidemark/format';
import { FileSystemCatalog, TableWrite, type CommitMessage, type TableSpec } from '../src/index.js';

let n = 0;
async function setup(spec: TableSpec): Promise<{ io: FileIO; location: string; schema: TableSchema }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://write-stream-${process.pid}-${++n}/wh`, { fileIO: io });
  const schema = await catalog.createTable('db.t', spec);
  return { io, location: catalog.tableLocation('db.t'), schema };
}

const spec = (options: Record<string, string> = {}): TableSpec => ({
  fields: [
    { name: 'p', type: 'STRING' },
    { name: 'seq', type: 'INT' },
    { name: 'name', type: 'STRING' },
    { name: 'x', type: 'DOUBLE' },
  ],
  partitionKeys: ['p'],
  options,
});

/** Write `k` of `rows` rows, partition `a` or `b` in runs of 50, names and doubles that barely compress. */
function chunk(k: number, rows: number): arrow.Table {
  const seq = Int32Array.from({ length: rows }, (_, i) => k * rows + i);
  return new arrow.Table({
    p: utf8Vector([...seq].map((s) => (Math.floor(s / 50) % 2 === 0 ? 'a' : 'b'))),
    seq: arrow.makeVector(seq),
    name: utf8Vector([...seq].map((s) => (s % 13 === 0 ? null : `name-${(s * 2654435761) % 1000003}`))),
    x: arrow.makeVector(Float64Array.from(seq, (s) => Math.sin(s))),
  });
}

async function fileRows(io: FileIO, path: string, schema: TableSchema): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for await (const b of readParquetFile(io, path, { pool: false })) {
    const batch = conformToPaimonTypes(b, schema.fields);
    for (let i = 0; i < batch.numRows; i++) out.push(schema.fields.map((f) => batch.getChild(f.name)!.get(i)));
  }
  return out;
}

const pathOf = (location: string, m: CommitMessage, fileName: string, p: string): string => `${location}/p=${p}/bucket-0/${fileName}`;
const partitionOf = (m: CommitMessage): string => (Buffer.from(m.partition).includes(Buffer.from('a')) ? 'a' : 'b');

describe('TableWrite streamRowGroupRows', () => {
  it('writes the rows, statistics and sequence numbers of the buffered writer, in row groups of the asked size', async () => {
    const writes = 12;
    const perWrite = 900;
    const results = [];
    for (const streamRowGroupRows of [undefined, 1_000]) {
      const { io, location, schema } = await setup(spec());
      const w = new TableWrite(io, location, schema, { startSequence: () => 5n, ...(streamRowGroupRows ? { streamRowGroupRows } : {}) });
      const encodes = vi.spyOn(sharedParquetWorkerPool(), 'encodeIpc');
      try {
        for (let k = 0; k < writes; k++) await w.write(chunk(k, perWrite));
        // Streamed: every full group (5 per partition) is with the encoder before prepareCommit;
        // buffered: nothing is encoded until the files are cut.
        expect(encodes).toHaveBeenCalledTimes(streamRowGroupRows ? 10 : 0);
      } finally {
        encodes.mockRestore();
      }
      const messages = await w.prepareCommit();
      await w.close();
      const byPartition = new Map<string, { meta: unknown; rows: unknown[][]; groups: bigint[] }[]>();
      for (const m of messages) {
        const p = partitionOf(m);
        const files = [];
        for (const f of m.newFiles) {
          const path = pathOf(location, m, f.fileName, p);
          const footer = await readParquetFooter(io, path);
          const { fileName: _name, fileSize: _size, creationTime: _time, ...meta } = f;
          files.push({ meta, rows: await fileRows(io, path, schema), groups: footer.rowGroups.map((g) => g.numRows) });
        }
        byPartition.set(p, files);
      }
      results.push(byPartition);
    }
    const [buffered, streamed] = results as [(typeof results)[0], (typeof results)[0]];
    expect([...streamed.keys()].sort()).toEqual(['a', 'b']);
    for (const p of ['a', 'b']) {
      const want = buffered.get(p)!;
      const got = streamed.get(p)!;
      expect(got).toHaveLength(1);
      expect(got.map((f) => f.meta)).toEqual(want.map((f) => f.meta));
      expect(got.map((f) => f.rows)).toEqual(want.map((f) => f.rows));
      // 5,400 rows per partition: five full groups and the rest.
      expect(got[0]!.groups).toEqual([1000n, 1000n, 1000n, 1000n, 1000n, 400n]);
      expect(got[0]!.rows.map((r) => r[1])).toEqual(
        Array.from({ length: writes * perWrite }, (_, i) => i).filter((s) => (Math.floor(s / 50) % 2 === 0) === (p === 'a')),
      );
    }
  });

  it('cuts files near target-file-size, rows in input order, sequence numbers contiguous across files', async () => {
    const target = 64 * 1024;
    const { io, location, schema } = await setup({
      fields: [
        { name: 'seq', type: 'INT' },
        { name: 'x', type: 'DOUBLE' },
      ],
      options: { 'target-file-size': '64 kb' },
    });
    const w = new TableWrite(io, location, schema, { startSequence: () => 0n, streamRowGroupRows: 1_500 });
    const writes = 40;
    const perWrite = 700;
    for (let k = 0; k < writes; k++) {
      const seq = Int32Array.from({ length: perWrite }, (_, i) => k * perWrite + i);
      await w.write(new arrow.Table({ seq: arrow.makeVector(seq), x: arrow.makeVector(Float64Array.from(seq, (s) => Math.sin(s * 7.1))) }));
    }
    const [msg] = await w.prepareCommit();
    await w.close();
    const files = msg!.newFiles;
    expect(files.length).toBeGreaterThan(3);
    for (const f of files.slice(0, -1)) {
      expect(f.fileSize).toBeGreaterThan(0.5 * target);
      expect(f.fileSize).toBeLessThan(2 * target);
    }
    const seqs: unknown[] = [];
    let nextSeq = 0n;
    for (const f of files) {
      expect(f.minSequenceNumber).toBe(nextSeq);
      nextSeq = f.maxSequenceNumber + 1n;
      const path = `${location}/bucket-0/${f.fileName}`;
      const groups = (await readParquetFooter(io, path)).rowGroups.map((g) => Number(g.numRows));
      expect(groups.slice(0, -1).every((g) => g === 1_500)).toBe(true);
      expect(groups.reduce((a, b) => a + b, 0)).toBe(f.rowCount);
      seqs.push(...(await fileRows(io, path, schema)).map((r) => r[0]));
    }
    expect(seqs).toEqual(Array.from({ length: writes * perWrite }, (_, i) => i));
  });

  it('abort() drops the file being encoded and leaves no data file', async () => {
    const { io, location, schema } = await setup({
      fields: [
        { name: 'seq', type: 'INT' },
        { name: 'x', type: 'DOUBLE' },
      ],
      options: { 'target-file-size': '64 kb' },
    });
    const w = new TableWrite(io, location, schema, { streamRowGroupRows: 1_000 });
    for (let k = 0; k < 20; k++) {
      const seq = Int32Array.from({ length: 700 }, (_, i) => k * 700 + i);
      await w.write(new arrow.Table({ seq: arrow.makeVector(seq), x: arrow.makeVector(Float64Array.from(seq, (s) => Math.cos(s * 3.3))) }));
    }
    await w.abort();
    await w.close();
    const left: string[] = [];
    for await (const f of io.list(location, { recursive: true })) if (f.path.endsWith('.parquet')) left.push(f.path);
    expect(left).toEqual([]);
  });

  it('rejects a streamRowGroupRows that is not a positive integer, naming the option', async () => {
    const { io, location, schema } = await setup(spec());
    expect(() => new TableWrite(io, location, schema, { streamRowGroupRows: 0 })).toThrow(
      /TableWriteOptions\.streamRowGroupRows must be a positive integer, got 0/,
    );
  });
});
