import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { CorruptFileError } from '../src/errors.js';
import { RoaringBitmap32, RoaringBitmap64, RoaringFormatError } from '../src/roaring.js';
import {
  DV_MAGIC_BITMAP32,
  DV_MAGIC_BITMAP64,
  decodeDeletionVector,
  decodeDeletionVectorFile,
  readDeletionVector,
  readDeletionVectors,
} from '../src/deletion-vector.js';
import { readIndexManifest } from '../src/index-manifest.js';
import { readManifestEntries } from '../src/manifest-entry.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PK_DV = join(REPO_ROOT, '../shared/fixtures/paimon/pk-dv/default.db/pk_table_scan_and_read_dv');
const havePkDv = existsSync(PK_DV);
if (!havePkDv) console.warn(`[deletion-vector.test] SKIPPING fixture tests: ${PK_DV} is absent`);

const localIO = {
  read: async (p: string): Promise<Uint8Array> => new Uint8Array(readFileSync(p)),
  readRange: async (p: string, offset: number, length: number): Promise<Uint8Array> =>
    new Uint8Array(readFileSync(p).subarray(offset, offset + length)),
};

/** Frames a bitmap body as a DV: BE size, magic, body, BE CRC32 of magic+body. */
function frameDv(magic: Uint8Array, body: Uint8Array): Uint8Array {
  const inner = Buffer.concat([magic, body]);
  const out = Buffer.alloc(4 + inner.length + 4);
  out.writeInt32BE(inner.length, 0);
  inner.copy(out, 4);
  out.writeUInt32BE(zlib.crc32(inner) >>> 0, 4 + inner.length);
  return out;
}
function magic32(): Uint8Array {
  const b = Buffer.alloc(4);
  b.writeInt32BE(DV_MAGIC_BITMAP32, 0);
  return b;
}

describe('RoaringBitmap32', () => {
  it('round-trips array and bitmap containers across several high keys', () => {
    const values = [0, 1, 2, 65535, 65536, 70000, 4_000_000_000, 0xffffffff];
    for (let i = 0; i < 10_000; i++) values.push(0x30000 + i * 3); // > 4096 in one container: bitmap
    const bm = RoaringBitmap32.from(values);
    const { bitmap, byteLength } = RoaringBitmap32.deserialize(bm.serialize());
    expect(byteLength).toBe(bm.serialize().length);
    expect(bitmap.cardinality).toBe(new Set(values).size);
    expect([...bitmap.values()]).toEqual([...new Set(values)].sort((a, b) => a - b));
    for (const v of values) expect(bitmap.contains(v)).toBe(true);
    for (const v of [3, 65534, 65537, 0x30001, 0x30000 + 30_000, 4_000_000_001, -1, 1.5]) {
      expect(bitmap.contains(v)).toBe(false);
    }
  });

  it('parses run containers of the run-enabled format (cookie 12347)', () => {
    // One container (key 1), runs [10..14] and [100..100]: cardinality 6, no offset header (< 4 containers).
    const b = Buffer.alloc(4 + 1 + 4 + 2 + 8);
    b.writeUInt32LE(12347 | (0 << 16), 0); // size - 1 = 0
    b[4] = 0b1; // container 0 is a run container
    b.writeUInt16LE(1, 5); // key
    b.writeUInt16LE(5, 7); // cardinality - 1
    b.writeUInt16LE(2, 9); // 2 runs
    b.writeUInt16LE(10, 11);
    b.writeUInt16LE(4, 13);
    b.writeUInt16LE(100, 15);
    b.writeUInt16LE(0, 17);
    const { bitmap, byteLength } = RoaringBitmap32.deserialize(b);
    expect(byteLength).toBe(b.length);
    expect([...bitmap.values()]).toEqual([65546, 65547, 65548, 65549, 65550, 65636]);
    expect(bitmap.cardinality).toBe(6);
    expect(bitmap.contains(65550)).toBe(true);
    expect(bitmap.contains(65551)).toBe(false);
    expect(bitmap.contains(65545)).toBe(false);
    expect(bitmap.contains(65636)).toBe(true);
    expect(RoaringBitmap32.deserialize(bitmap.serialize()).bitmap.cardinality).toBe(6);
  });

  it('rejects unknown cookies and truncated input', () => {
    expect(() => RoaringBitmap32.deserialize(new Uint8Array([1, 2, 3, 4]))).toThrow(RoaringFormatError);
    const good = RoaringBitmap32.from([1, 2, 3, 70000]).serialize();
    for (let cut = 0; cut < good.length; cut++) {
      expect(() => RoaringBitmap32.deserialize(good.subarray(0, cut))).toThrow(RoaringFormatError);
    }
  });
});

describe('RoaringBitmap64', () => {
  it('parses the portable 64-bit layout', () => {
    const lowA = RoaringBitmap32.from([5, 7]).serialize();
    const lowB = RoaringBitmap32.from([1]).serialize();
    const b = Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]), Buffer.from([0, 0, 0, 0]), lowA, Buffer.from([3, 0, 0, 0]), lowB]);
    const { bitmap, byteLength } = RoaringBitmap64.deserialize(b);
    expect(byteLength).toBe(b.length);
    expect(bitmap.cardinality).toBe(3);
    expect([...bitmap.values()]).toEqual([5, 7, 3 * 2 ** 32 + 1]);
    expect(bitmap.contains(3n * 2n ** 32n + 1n)).toBe(true);
    expect(bitmap.contains(3 * 2 ** 32)).toBe(false);
    expect(bitmap.contains(6)).toBe(false);
  });
});

describe('deletion vectors', () => {
  it('decodes a framed 32-bit vector and checks size, CRC and cardinality', () => {
    const dv = frameDv(magic32(), RoaringBitmap32.from([0, 3, 99]).serialize());
    const v = decodeDeletionVector(dv, 'idx', { length: dv.length - 8, cardinality: 3 });
    expect(v.cardinality).toBe(3);
    expect([0, 3, 99].every((p) => v.isDeleted(p))).toBe(true);
    expect(v.isDeleted(1)).toBe(false);
    expect(v.isDeleted(3n)).toBe(true);
    expect(() => decodeDeletionVector(dv, 'idx', { cardinality: 4 })).toThrow(/4/);
    expect(() => decodeDeletionVector(dv, 'idx', { length: 5 })).toThrow(CorruptFileError);
    const flipped = new Uint8Array(dv);
    flipped[12] = flipped[12]! ^ 0x01;
    expect(() => decodeDeletionVector(flipped, 'idx')).toThrow(/CRC32/);
    expect(() => decodeDeletionVector(dv.subarray(0, dv.length - 2), 'idx')).toThrow(CorruptFileError);
  });

  it('decodes a framed 64-bit vector (little-endian magic)', () => {
    const magic = Buffer.alloc(4);
    magic.writeInt32LE(DV_MAGIC_BITMAP64, 0);
    const body = Buffer.concat([
      Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]),
      Buffer.from([0, 0, 0, 0]),
      RoaringBitmap32.from([2, 8]).serialize(),
    ]);
    const v = decodeDeletionVector(frameDv(magic, body), 'idx');
    expect(v.cardinality).toBe(2);
    expect(v.isDeleted(8)).toBe(true);
    expect(v.isDeleted(9)).toBe(false);
  });

  it('rejects an unknown magic and a wrong file version', () => {
    const dv = frameDv(Buffer.from([1, 2, 3, 4]), RoaringBitmap32.from([1]).serialize());
    expect(() => decodeDeletionVector(dv, 'idx')).toThrow(/magic/);
    const good = frameDv(magic32(), RoaringBitmap32.from([1]).serialize());
    const file = Buffer.concat([Buffer.from([2]), good]);
    const ranges = [{ dataFileName: 'd', offset: 1, length: good.length - 8, cardinality: 1 }];
    expect(() => decodeDeletionVectorFile(file, ranges, 'idx')).toThrow(/version 2/);
    file[0] = 1;
    expect(decodeDeletionVectorFile(file, ranges, 'idx').get('d')!.isDeleted(1)).toBe(true);
    expect(() => decodeDeletionVectorFile(file, [{ ...ranges[0]!, offset: 5 }], 'idx')).toThrow(CorruptFileError);
  });
});

describe.skipIf(!havePkDv)('pk-dv fixture deletion vectors', () => {
  it('every DV of the index manifest decodes with matching size, CRC and cardinality', async () => {
    const manifestDir = join(PK_DV, 'manifest');
    const rowCounts = new Map<string, number>();
    for (const f of readdirSync(manifestDir).filter((n) => /^manifest-(?!list-)/.test(n))) {
      for await (const e of readManifestEntries(localIO, join(manifestDir, f))) rowCounts.set(e.file.fileName, e.file.rowCount);
    }
    let vectors = 0;
    for (const f of readdirSync(manifestDir).filter((n) => n.startsWith('index-manifest-'))) {
      for (const entry of await readIndexManifest(localIO, join(manifestDir, f))) {
        expect(entry.indexType).toBe('DELETION_VECTORS');
        expect(entry.dvRanges).not.toBeNull();
        const path = join(PK_DV, 'index', entry.fileName);
        const dvs = await readDeletionVectors(localIO, path, entry.dvRanges!);
        for (const range of entry.dvRanges!) {
          const dv = dvs.get(range.dataFileName)!;
          expect(range.cardinality).not.toBeNull();
          expect(dv.cardinality).toBe(range.cardinality);
          const positions = [...dv.positions()];
          expect(positions).toHaveLength(dv.cardinality);
          const rows = rowCounts.get(range.dataFileName);
          expect(rows).toBeDefined();
          for (const p of positions) {
            expect(p).toBeLessThan(rows!);
            expect(dv.isDeleted(p)).toBe(true);
          }
          // Ranged read gives the same vector.
          const single = await readDeletionVector(localIO, path, range);
          expect([...single.positions()]).toEqual(positions);
          vectors++;
        }
        expect(entry.rowCount).toBe(entry.dvRanges!.length);
      }
    }
    expect(vectors).toBe(2);
  });

  it('a flipped bit in a fixture DV is reported as a CRC mismatch naming the file', () => {
    const file = readdirSync(join(PK_DV, 'index'))[0]!;
    const path = join(PK_DV, 'index', file);
    const bytes = new Uint8Array(readFileSync(path));
    bytes[bytes.length - 6] = bytes[bytes.length - 6]! ^ 0x04;
    const size = new DataView(bytes.buffer).getInt32(1, false);
    const ranges = [{ dataFileName: 'x', offset: 1, length: size, cardinality: null }];
    expect(() => decodeDeletionVectorFile(bytes, ranges, path)).toThrow(CorruptFileError);
    expect(() => decodeDeletionVectorFile(bytes, ranges, path)).toThrow(basename(path));
  });
});
