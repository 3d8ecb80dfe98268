import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MutableRoaringBitmap32, RoaringBitmap32, RoaringBitmap64 } from '../src/roaring.js';
import {
  DV_MAGIC_BITMAP64,
  MutableDeletionVector,
  decodeDeletionVector,
  decodeDeletionVectorFile,
  encodeDeletionVectorFile,
  readDeletionVectorsAt,
} from '../src/deletion-vector.js';
import { CorruptFileError } from '../src/errors.js';
import { readIndexManifest } from '../src/index-manifest.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PK_DV = join(REPO_ROOT, '../shared/fixtures/paimon/pk-dv/default.db/pk_table_scan_and_read_dv');
const havePkDv = existsSync(PK_DV);
if (!havePkDv) console.warn(`[deletion-vector-write.test] SKIPPING fixture tests: ${PK_DV} is absent`);
const localIO = { read: async (p: string): Promise<Uint8Array> => new Uint8Array(readFileSync(p)) };

describe('Java-compatible roaring serialization', () => {
  it('writes a consecutive block as a run container (cookie 12347, no offsets below 4 containers)', () => {
    const bytes = RoaringBitmap32.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]).serialize();
    const v = Buffer.from(bytes);
    expect(v.readUInt32LE(0)).toBe(12347); // run cookie, 1 container
    expect(v[4]).toBe(1); // container 0 is a run container
    expect(v.readUInt16LE(5)).toBe(0); // key
    expect(v.readUInt16LE(7)).toBe(9); // cardinality - 1
    expect(v.readUInt16LE(9)).toBe(1); // one run
    expect([v.readUInt16LE(11), v.readUInt16LE(13)]).toEqual([0, 9]);
    expect(bytes.length).toBe(15);
  });

  it('keeps scattered values in array containers (cookie 12346 with offsets)', () => {
    const bytes = Buffer.from(RoaringBitmap32.from([1, 3, 5]).serialize());
    expect(bytes.readUInt32LE(0)).toBe(12346);
    expect(bytes.readUInt32LE(4)).toBe(1);
    expect(bytes.readUInt32LE(12)).toBe(16); // offset of the only container
    expect([bytes.readUInt16LE(16), bytes.readUInt16LE(18), bytes.readUInt16LE(20)]).toEqual([1, 3, 5]);
  });

  it('writes the offset header of a run-enabled bitmap from 4 containers on, and bitmap containers above 4096 values', () => {
    const values: number[] = [];
    for (let k = 0; k < 5; k++) for (let i = 0; i < 100; i++) values.push(k * 65536 + i * 2); // arrays
    for (let i = 0; i < 5000; i++) values.push(6 * 65536 + i * 3); // bitmap
    for (let i = 0; i < 70000; i++) values.push(8 * 65536 + i); // runs over two containers
    const bm = RoaringBitmap32.from(values);
    const bytes = bm.serialize();
    const view = Buffer.from(bytes);
    const n = view.readUInt32LE(0) >>> 16;
    expect(view.readUInt32LE(0) & 0xffff).toBe(12347);
    expect(n + 1).toBe(8);
    const back = RoaringBitmap32.deserialize(bytes);
    expect(back.byteLength).toBe(bytes.length);
    expect([...back.bitmap.values()]).toEqual([...new Set(values)].sort((a, b) => a - b));
    // The offset header points at each container body.
    const flags = 1;
    const firstOffset = view.readUInt32LE(4 + flags + 8 * 4);
    expect(firstOffset).toBe(4 + flags + 8 * 8);
    // A mutable bitmap with the same values serializes identically.
    const m = new MutableRoaringBitmap32();
    for (const x of values) m.add(x);
    expect(Buffer.from(m.serialize()).equals(view)).toBe(true);
  });
});

describe('MutableDeletionVector', () => {
  it('round-trips through the reader, 32-bit and 64-bit', () => {
    for (const bitmap64 of [false, true]) {
      const dv = new MutableDeletionVector(bitmap64);
      const positions = [0, 7, 8, 9, 10, 65536, 200_000, ...(bitmap64 ? [2 ** 33 + 5] : [])];
      for (const p of positions) expect(dv.delete(p)).toBe(true);
      expect(dv.delete(7)).toBe(false);
      const framed = dv.serialize();
      const back = decodeDeletionVector(framed, 'mem', { length: framed.length - 8, cardinality: positions.length });
      expect([...back.positions()]).toEqual(positions);
      expect(back.isDeleted(9)).toBe(true);
      expect(back.isDeleted(11)).toBe(false);
    }
  });

  it('writes the 64-bit layout with one bitmap per key from 0 (empty ones included)', () => {
    const dv = new MutableDeletionVector(true);
    dv.delete(2 ** 32 + 1);
    const body = Buffer.from(dv.serialize().subarray(4, -4));
    expect(body.readInt32LE(0)).toBe(DV_MAGIC_BITMAP64);
    expect(body.readBigUInt64LE(4)).toBe(2n);
    const { bitmap } = RoaringBitmap64.deserialize(body, 4);
    expect([...bitmap.values()]).toEqual([2 ** 32 + 1]);
  });

  it('refuses positions beyond the 32-bit limit, naming the option', () => {
    expect(() => new MutableDeletionVector().delete(2 ** 31)).toThrow(/deletion-vectors\.bitmap64/);
  });

  it('encodes several vectors in order with their ranges', () => {
    const a = new MutableDeletionVector();
    a.delete(1);
    const b = new MutableDeletionVector();
    b.delete(2);
    b.delete(3);
    const { bytes, ranges } = encodeDeletionVectorFile([
      ['a.parquet', a],
      ['b.parquet', b],
    ]);
    expect(bytes[0]).toBe(1);
    expect(ranges.map((r) => r.offset)).toEqual([1, 1 + 8 + ranges[0]!.length]);
    const back = decodeDeletionVectorFile(bytes, ranges, 'mem');
    expect([...back.get('b.parquet')!.positions()]).toEqual([2, 3]);
    expect(ranges.map((r) => r.cardinality)).toEqual([1, 2]);
  });

  it('reads the vectors of several files with one ranged read per index file, spanning only the wanted ranges', async () => {
    const vector = (...positions: number[]): MutableDeletionVector => {
      const v = new MutableDeletionVector();
      for (const p of positions) v.delete(p);
      return v;
    };
    const one = encodeDeletionVectorFile([
      ['a.parquet', vector(1)],
      ['b.parquet', vector(2, 3)],
      ['c.parquet', vector(4, 5, 6)],
    ]);
    const two = encodeDeletionVectorFile([['d.parquet', vector(7)]]);
    const files = new Map([
      ['one', one.bytes],
      ['two', two.bytes],
    ]);
    const reads: [string, number, number][] = [];
    const io = {
      readRange: async (path: string, offset: number, length: number): Promise<Uint8Array> => {
        reads.push([path, offset, length]);
        return files.get(path)!.subarray(offset, offset + length);
      },
    };
    const [, rb, rc] = one.ranges;
    const got = await readDeletionVectorsAt(io, [
      { path: 'one', range: rc! },
      { path: 'two', range: two.ranges[0]! },
      { path: 'one', range: rb! },
    ]);
    expect(new Map([...got].map(([k, v]) => [k, [...v.positions()]]))).toEqual(
      new Map([
        ['c.parquet', [4, 5, 6]],
        ['d.parquet', [7]],
        ['b.parquet', [2, 3]],
      ]),
    );
    // b and c are adjacent in 'one': one read from b's size field to c's CRC, a not included.
    expect(reads.sort()).toEqual([
      ['one', rb!.offset, rc!.offset + 8 + rc!.length - rb!.offset],
      ['two', 1, 8 + two.ranges[0]!.length],
    ]);
    // A range past the end of a (truncated) file is reported naming the file and the data file.
    const short = { readRange: async (_p: string, offset: number, length: number) => one.bytes.subarray(offset, offset + length - 3) };
    await expect(readDeletionVectorsAt(short, [{ path: 'one', range: rc! }])).rejects.toThrow(CorruptFileError);
    await expect(readDeletionVectorsAt(short, [{ path: 'one', range: rc! }])).rejects.toThrow(/'c\.parquet'/);
  });
});

describe.skipIf(!havePkDv)('DV index files written by Java (pk-dv)', () => {
  it('decoding and re-encoding each index file gives the same bytes and ranges', async () => {
    const manifests = readdirSync(join(PK_DV, 'manifest')).filter((n) => n.startsWith('index-manifest-'));
    let checked = 0;
    for (const m of manifests) {
      for (const e of await readIndexManifest(localIO, join(PK_DV, 'manifest', m))) {
        if (e.indexType !== 'DELETION_VECTORS') continue;
        const bytes = new Uint8Array(readFileSync(join(PK_DV, 'index', e.fileName)));
        const decoded = decodeDeletionVectorFile(bytes, e.dvRanges!, e.fileName);
        const again = encodeDeletionVectorFile([...decoded].map(([name, dv]) => [name, MutableDeletionVector.copyOf(dv)] as const));
        expect(Buffer.from(again.bytes).equals(Buffer.from(bytes))).toBe(true);
        expect(again.ranges).toEqual(e.dvRanges);
        expect(again.bytes.length).toBe(e.fileSize);
        checked++;
      }
    }
    expect(checked).toBe(2);
  });
});
