/**
 * Paimon's file-index format (FileIndexFormat v1) and bloom filter (BloomFilterFileIndex,
 * FastHash, BloomFilter64), compared field by field with Java's layout. No Java-written fixture
 * in ../shared carries a file index, so the expected bytes are built here by hand from Paimon's
 * source; the hash and bit constants below come from an independent model of Java's arithmetic
 * (explicit 64-bit wrap-around) and, for strings, from the reference C xxHash library (XXH64,
 * seed 0, which is what Java's `LongHashFunction.xx()` computes).
 */
import { describe, expect, it } from 'vitest';
import {
  BloomFilter64,
  BloomFilterIndexReader,
  BloomFilterIndexWriter,
  bloomFilterSize,
  CorruptFileError,
  fastHashOf,
  FileIndexFile,
  fileIndexMightContain,
  longHash,
  writeFileIndex,
  xxHash64,
  type DataType,
} from '../src/index.js';

const INT: DataType = { root: 'INT', nullable: true };
const STRING: DataType = { root: 'VARCHAR', nullable: true, length: 2147483647 };
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('FastHash', () => {
  it("matches Java's Thomas Wang long hash (signed long arithmetic)", () => {
    expect(longHash(0n)).toBe(0n);
    expect(longHash(1n)).toBe(6614235796240398542n);
    expect(longHash(2n)).toBe(-5218261022256003468n);
    expect(longHash(3n)).toBe(1396078460937419741n);
    expect(longHash(-1n)).toBe(6614246905173314819n);
    expect(longHash(42n)).toBe(1098236396662648698n);
    expect(longHash(1n << 40n)).toBe(6024996419662910741n);
  });

  it('matches XXH64 (seed 0) of the reference implementation, as a signed long', () => {
    expect(BigInt.asUintN(64, xxHash64(new Uint8Array(0)))).toBe(0xef46db3751d8e999n);
    expect(xxHash64(utf8('a'))).toBe(-3292477735350538661n);
    expect(xxHash64(utf8('abc'))).toBe(4952883123889572249n);
    expect(xxHash64(utf8('hello'))).toBe(2794345569481354659n);
    expect(BigInt.asUintN(64, xxHash64(utf8('paimon')))).toBe(0x88c6247bf3815e4n);
    // ≥ 32 bytes: the four-lane stripe loop.
    expect(BigInt.asUintN(64, xxHash64(Uint8Array.from({ length: 40 }, (_, i) => i)))).toBe(0xf5da40f1b11741e9n);
    expect(BigInt.asUintN(64, xxHash64(utf8('0123456789abcdefghijklmnopqrstuvwxyz')))).toBe(0x69196c1b3af0bff9n);
  });

  it('matches XXH64 at every tail length 0..79 (a polynomial of the 80 hashes of the reference library)', () => {
    let sum = 0n;
    for (let n = 0; n < 80; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n * 11) & 255);
      sum = BigInt.asUintN(64, sum * 31n + BigInt.asUintN(64, xxHash64(bytes)));
    }
    expect(sum).toBe(0xe2a20d7882cee663n);
  });

  it('hashes each type as Java does', () => {
    const int = fastHashOf(INT)!;
    expect(int(1)).toBe(longHash(1n));
    expect(fastHashOf({ root: 'BIGINT', nullable: true })!(2n)).toBe(longHash(2n));
    expect(fastHashOf({ root: 'DATE', nullable: true })!(3)).toBe(longHash(3n));
    expect(fastHashOf(STRING)!('abc')).toBe(xxHash64(utf8('abc')));
    expect(fastHashOf({ root: 'VARBINARY', nullable: true, length: 10 })!(utf8('a'))).toBe(xxHash64(utf8('a')));
    // Float.floatToIntBits(1.5f) = 0x3fc00000; Double.doubleToLongBits(-2.0) = 0xc000000000000000.
    expect(fastHashOf({ root: 'FLOAT', nullable: true })!(1.5)).toBe(longHash(0x3fc00000n));
    expect(fastHashOf({ root: 'DOUBLE', nullable: true })!(-2)).toBe(longHash(BigInt.asIntN(64, 0xc000000000000000n)));
    // A negative float's int bits are sign-extended to the long Java hashes.
    expect(fastHashOf({ root: 'FLOAT', nullable: true })!(-1)).toBe(longHash(BigInt.asIntN(32, 0xbf800000n)));
    const ts = { millis: 1_700_000_000_123, nanoOfMillis: 456_789 };
    expect(fastHashOf({ root: 'TIMESTAMP', nullable: true, precision: 3 })!(ts)).toBe(longHash(1_700_000_000_123n));
    expect(fastHashOf({ root: 'TIMESTAMP', nullable: true, precision: 6 })!(ts)).toBe(longHash(1_700_000_000_123_456n));
    // Paimon's FastHash has no hash for these: no bloom filter on them.
    expect(fastHashOf({ root: 'DECIMAL', nullable: true, precision: 10, scale: 2 })).toBeNull();
    expect(fastHashOf({ root: 'BOOLEAN', nullable: true })).toBeNull();
  });
});

describe('BloomFilter64', () => {
  it('sizes the filter from items and fpp as Java does (bits rounded up to whole longs, always adding some)', () => {
    expect(bloomFilterSize(10, 0.1)).toEqual({ numBits: 64, numHashFunctions: 4 });
    expect(bloomFilterSize(100, 0.01)).toEqual({ numBits: 960, numHashFunctions: 7 });
    expect(bloomFilterSize(1_000_000, 0.1)).toEqual({ numBits: 4_792_576, numHashFunctions: 3 });
  });

  it('sets the bit positions of Java (int halves, i * hash2, negatives flipped, modulo numBits)', () => {
    const f = BloomFilter64.forItems(10, 0.1);
    f.addHash(longHash(1n));
    // Java positions of longHash(1) for 4 functions over 64 bits: 55, 32, 54, 50.
    const set = [...Array(64).keys()].filter((p) => (f.bits[p >>> 3]! & (1 << (p & 7))) !== 0);
    expect(set).toEqual([32, 50, 54, 55]);
  });
});

describe('FileIndexFormat v1', () => {
  // Two columns, `id` INT with 1, 2, 3 and `name` STRING with 'a', 'abc' (and a null, not indexed),
  // both `bloom-filter` with items = 10, fpp = 0.1: 64 bits, 4 hash functions.
  const idBody = hex('00000004' + '016400000110cd00'); // numHashFunctions (BE int), bits (LE longs)
  const nameBody = hex('00000004' + '0810040001400221');
  // Java's HashMap iterates "name" (bucket 8 of 16) before "id" (bucket 11): that is the column order.
  const expected = concat(
    hex('00054e4ed01a35ae'), //  0: magic 1493475289347502 (8 bytes, big-endian long)
    int(1), //                    8: version
    int(86), //                  12: head length = 20 + (2+4 + 4 + 2+12 + 4+4) + (2+2 + 4 + 2+12 + 4+4) + 4
    int(2), //                   16: column count
    utf('name'), //              20: writeUTF: u16 length 4, bytes
    int(1), //                   26: index count
    utf('bloom-filter'), //      30
    int(86), //                  44: start of name's body (head length + 0)
    int(12), //                  48: its length
    utf('id'), //                52
    int(1), //                   56
    utf('bloom-filter'), //      60
    int(98), //                  74: start of id's body (86 + 12)
    int(12), //                  78
    int(0), //                   82: redundant length
    nameBody, //                 86
    idBody, //                   98
  );

  it("writes Java's bytes for a small two-column index", () => {
    const id = new BloomFilterIndexWriter(INT, 10, 0.1);
    for (const v of [1, 2, 3, null]) id.add(v);
    const name = new BloomFilterIndexWriter(STRING, 10, 0.1);
    for (const v of ['a', null, 'abc']) name.add(v);
    expect(Buffer.from(id.serialize()).toString('hex')).toBe(Buffer.from(idBody).toString('hex'));
    expect(Buffer.from(name.serialize()).toString('hex')).toBe(Buffer.from(nameBody).toString('hex'));
    const written = writeFileIndex(
      new Map([
        ['id', new Map([['bloom-filter', id.serialize()]])],
        ['name', new Map([['bloom-filter', name.serialize()]])],
      ]),
    );
    expect(Buffer.from(written).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
  });

  it('reads the hand-built bytes: present values may match, absent ones are ruled out', () => {
    const file = FileIndexFile.parse(expected, 'data-1.parquet.index');
    expect(file.version).toBe(1);
    expect([...file.entries.keys()]).toEqual(['name', 'id']);
    expect(file.entries.get('id')!.get('bloom-filter')).toEqual({ start: 98, length: 12 });
    for (const v of [1, 2, 3]) expect(fileIndexMightContain(file, 'id', INT, [v])).toBe(true);
    expect(fileIndexMightContain(file, 'name', STRING, ['a'])).toBe(true);
    expect(fileIndexMightContain(file, 'name', STRING, ['abc'])).toBe(true);
    // With 64 bits these are a property of the hashes: Java rules them out too.
    expect(fileIndexMightContain(file, 'id', INT, [4])).toBe(false);
    expect(fileIndexMightContain(file, 'id', INT, [4, 2])).toBe(true);
    expect(fileIndexMightContain(file, 'name', STRING, ['zz'])).toBe(false);
    // A null literal never rules a file out; a column without index neither.
    expect(fileIndexMightContain(file, 'id', INT, [null])).toBe(true);
    expect(fileIndexMightContain(file, 'other', INT, [4])).toBe(true);
  });

  it('never gives a false negative (random values, default-like sizing)', () => {
    let seed = 7;
    const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) | 0) >>> 0;
    const w = new BloomFilterIndexWriter(INT, 1000, 0.05);
    const added = Array.from({ length: 1000 }, () => rand() | 0);
    for (const v of added) w.add(v);
    const r = new BloomFilterIndexReader(INT, w.serialize());
    for (const v of added) expect(r.mightContain(v)).toBe(true);
    let falsePositives = 0;
    const set = new Set(added);
    let probes = 0;
    for (let i = 0; i < 5000; i++) {
      const v = rand() | 0;
      if (set.has(v)) continue;
      probes++;
      if (r.mightContain(v)) falsePositives++;
    }
    // fpp 0.05: a broken filter (all bits set) answers yes to every probe.
    expect(falsePositives / probes).toBeLessThan(0.1);
  });

  it('treats +0 and -0 alike for floats (SQL equality), though Java hashes their bits', () => {
    const w = new BloomFilterIndexWriter({ root: 'DOUBLE', nullable: true }, 10, 0.01);
    w.add(-0);
    const r = new BloomFilterIndexReader({ root: 'DOUBLE', nullable: true }, w.serialize());
    expect(r.mightContain(0)).toBe(true);
    expect(r.mightContain(-0)).toBe(true);
  });

  it('reads unknown index types (bitmap, bsi) as "cannot skip", and empty indexes as "no values"', () => {
    const file = FileIndexFile.parse(
      writeFileIndex(
        new Map([
          ['a', new Map([['bitmap', Uint8Array.of(1, 2, 3)]])],
          ['b', new Map([['bsi', Uint8Array.of(9)]])],
        ]),
      ),
      'x',
    );
    expect(fileIndexMightContain(file, 'a', INT, [42])).toBe(true);
    expect(fileIndexMightContain(file, 'b', INT, [42])).toBe(true);
    // Java marks an index written without values with start -1 (EMPTY_INDEX_FLAG); head = 20 + 3 + 4 + 14 + 8 + 4.
    const empty = concat(hex('00054e4ed01a35ae'), int(1), int(53), int(1), utf('c'), int(1), utf('bloom-filter'), int(-1), int(0), int(0));
    expect(fileIndexMightContain(FileIndexFile.parse(empty, 'y'), 'c', INT, [1])).toBe(false);
  });

  it('reads version 2 (footer with long offsets) and an unknown version as an index that rules nothing out', () => {
    const body = (() => {
      const w = new BloomFilterIndexWriter(INT, 10, 0.1);
      w.add(5);
      return w.serialize();
    })();
    const footer = concat(int(1), utf('id'), int(1), utf('bloom-filter'), long(12), long(body.length));
    const v2 = concat(hex('00054e4ed01a35ae'), int(2), body, footer, int(footer.length), hex('5041464944583032'));
    const file = FileIndexFile.parse(v2, 'v2');
    expect(file.version).toBe(2);
    expect(fileIndexMightContain(file, 'id', INT, [5])).toBe(true);
    expect(fileIndexMightContain(file, 'id', INT, [4])).toBe(false);
    const v9 = concat(hex('00054e4ed01a35ae'), int(9), int(0));
    expect(fileIndexMightContain(FileIndexFile.parse(v9, 'v9'), 'id', INT, [4])).toBe(true);
  });

  it('rejects bytes that are not a file index with an error naming the file', () => {
    expect(() => FileIndexFile.parse(Uint8Array.of(1, 2, 3), 'bucket-0/data-x.parquet.index')).toThrow(CorruptFileError);
    expect(() => FileIndexFile.parse(concat(hex('00054e4ed01a35ae'), int(1), int(500)), 'cut.index')).toThrow(/cut\.index.*cut short/);
  });

  it('writes the column names as Java writeUTF (modified UTF-8)', () => {
    const bytes = writeFileIndex(new Map([['é\u0000', new Map([['bloom-filter', new Uint8Array(12)]])]]));
    // u16 length 4: 'é' = c3 a9, NUL = c0 80 (modified UTF-8).
    expect(Buffer.from(bytes.subarray(20, 26)).toString('hex')).toBe('0004c3a9c080');
    expect([...FileIndexFile.parse(bytes, 'z').entries.keys()]).toEqual(['é\u0000']);
  });
});

function hex(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s, 'hex'));
}
function int(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, v, false);
  return b;
}
function long(v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, BigInt(v), false);
  return b;
}
function utf(s: string): Uint8Array {
  const body = new TextEncoder().encode(s);
  return concat(Uint8Array.of(body.length >> 8, body.length & 0xff), body);
}
function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts));
}
