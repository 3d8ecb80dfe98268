import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { conformToPaimonTypes, deserializeBinaryRow, partitionPath, readParquetFile, type TableSchema } from '@tidemark/format';
import { FileSystemCatalog, TableWrite, type TableSpec } from '../src/index.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

let n = 0;
async function setup(spec: TableSpec): Promise<{ io: FileIO; location: string; schema: TableSchema }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://write-routing-${process.pid}-${++n}/wh`, { fileIO: io });
  const schema = await catalog.createTable('db.t', spec);
  return { io, location: catalog.tableLocation('db.t'), schema };
}

async function columnOf(io: FileIO, path: string, schema: TableSchema, column: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const b of readParquetFile(io, path)) {
    const vec = conformToPaimonTypes(b, schema.fields).getChild(column)!;
    for (let i = 0; i < vec.length; i++) out.push(vec.get(i));
  }
  return out;
}

describe('TableWrite: file sizes', () => {
  it('fills every file but the last to about target-file-size when rows arrive in many small writes', async () => {
    const target = 64 * 1024;
    const { io, location, schema } = await setup({
      fields: [
        { name: 'seq', type: 'INT' },
        { name: 'x', type: 'DOUBLE' },
        { name: 'y', type: 'DOUBLE' },
      ],
      options: { 'target-file-size': '64 kb' },
    });
    const w = new TableWrite(io, location, schema, { startSequence: () => 0n });
    // Random doubles barely compress, so file sizes follow the row count.
    const next = seededRandom(42);
    const perWrite = 700;
    const writes = 60;
    for (let k = 0; k < writes; k++) {
      const seq = Int32Array.from({ length: perWrite }, (_, i) => k * perWrite + i);
      const x = Float64Array.from({ length: perWrite }, () => next());
      const y = Float64Array.from({ length: perWrite }, () => next());
      await w.write(new arrow.Table({ seq: arrow.makeVector(seq), x: arrow.makeVector(x), y: arrow.makeVector(y) }));
    }
    const [msg] = await w.prepareCommit();
    const files = msg!.newFiles;
    // 60 × 700 rows of ~20 bytes ≈ 820 KiB of barely compressible input: many files.
    expect(files.length).toBeGreaterThan(4);
    for (const f of files.slice(0, -1)) {
      expect(f.fileSize).toBeGreaterThan(0.5 * target);
      expect(f.fileSize).toBeLessThan(2 * target);
    }
    expect(files.at(-1)!.fileSize).toBeLessThan(2 * target);
    // Rows stay in input order across files, with contiguous sequence numbers.
    const seqs: unknown[] = [];
    let nextSeq = 0n;
    for (const f of files) {
      expect(f.minSequenceNumber).toBe(nextSeq);
      nextSeq = f.maxSequenceNumber + 1n;
      seqs.push(...(await columnOf(io, `${location}/bucket-0/${f.fileName}`, schema, 'seq')));
    }
    expect(seqs).toEqual(Array.from({ length: writes * perWrite }, (_, i) => i));
  });
});

describe('TableWrite: routing rows by partition', () => {
  const spec: TableSpec = {
    fields: [
      { name: 'p', type: 'STRING' },
      { name: 'q', type: 'BIGINT' },
      { name: 'id', type: 'INT' },
    ],
    partitionKeys: ['p', 'q'],
  };
  // Runs of equal keys, with neighbours that differ only in bytes of equal length, by null, by
  // empty string, or in the second key only.
  const keys: Array<[string | null, bigint | null]> = [
    ['2024-01-01', 1n],
    ['2024-01-02', 1n],
    ['2024-01-02', 2n],
    [null, 2n],
    ['', 2n],
    ['', null],
    [null, null],
    ['2024-01-01', 1n],
    ['2024-01-0é', 1n],
  ];

  async function writeAndGroup(order: number[][]): Promise<Map<string, number[]>> {
    const { io, location, schema } = await setup(spec);
    const w = new TableWrite(io, location, schema);
    const rows = order.flat().map((id) => {
      const [p, q] = keys[Math.floor(id / 100)]!;
      return { p, q, id };
    });
    await w.write(rows);
    const got = new Map<string, number[]>();
    for (const m of await w.prepareCommit()) {
      const [p, q] = deserializeBinaryRow(m.partition, [schema.fields[0]!.type, schema.fields[1]!.type]);
      const ids: number[] = [];
      for (const f of m.newFiles) {
        const dir = partitionPath(['p', 'q'], [schema.fields[0]!.type, schema.fields[1]!.type], [p ?? null, q ?? null]);
        for await (const b of readParquetFile(io, `${location}/${dir}bucket-0/${f.fileName}`)) {
          const batch = conformToPaimonTypes(b, schema.fields);
          for (let i = 0; i < batch.numRows; i++) {
            expect(batch.getChild('p')!.get(i)).toBe(p);
            expect(batch.getChild('q')!.get(i)).toBe(q);
            ids.push(batch.getChild('id')!.get(i) as number);
          }
        }
      }
      got.set(JSON.stringify([p, q === null ? null : String(q)]), ids);
    }
    return got;
  }

  /** Expected ids per partition, in input order, computed from the key table. */
  function expected(order: number[][]): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const id of order.flat()) {
      const [p, q] = keys[Math.floor(id / 100)]!;
      const key = JSON.stringify([p, q === null ? null : String(q)]);
      out.set(key, [...(out.get(key) ?? []), id]);
    }
    return out;
  }

  it('sends sorted runs (sliced) and interleaved rows (gathered) to the partition of their values', async () => {
    // Runs of 50 rows per key entry: few runs, the zero-copy slice path.
    const runs = keys.map((_, k) => Array.from({ length: 50 }, (_, i) => k * 100 + i));
    // One row per key entry in turn: a run per row, the gather path.
    const interleaved = Array.from({ length: 20 }, (_, i) => keys.map((_, k) => k * 100 + 50 + i));
    for (const order of [runs, interleaved]) {
      const got = await writeAndGroup(order);
      expect(got).toEqual(expected(order));
    }
  });
});
