import { describe, expect, it } from 'vitest';
import type { DataFileMeta, ManifestEntry } from '@tidemark/format';
import { EntryCompactor } from '../src/scan/compact-meta.js';
import { BucketFile } from '../src/scan/data-split.js';

/** An entry whose byte fields are views into one shared "block", like decoded manifests with copyBytes: false. */
function decodedEntry(i: number, block: Uint8Array, over: Partial<DataFileMeta> = {}): ManifestEntry {
  block.set([0, 0, 0, 1, 0, 0, 0, 0, 7, 0, 0, 0], 0); // partition
  block.fill(0, 12, 24); // empty row (append key rows)
  for (let k = 0; k < 40; k++) block[24 + k] = (i * 31 + k) & 0xff; // value stats min
  for (let k = 0; k < 40; k++) block[64 + k] = (i * 17 + k) & 0xff; // value stats max
  const empty = block.subarray(12, 24);
  return {
    kind: 'ADD',
    partition: block.subarray(0, 12),
    bucket: 3,
    totalBuckets: 4,
    file: {
      fileName: `data-${i}.parquet`,
      fileSize: 100 + i,
      rowCount: 10 + i,
      minKey: empty,
      maxKey: empty,
      keyStats: { minValues: empty, maxValues: empty, nullCounts: [] },
      valueStats: { minValues: block.subarray(24, 64), maxValues: block.subarray(64, 104), nullCounts: [0, i % 2 === 0 ? 0 : null, 5] },
      minSequenceNumber: BigInt(i),
      maxSequenceNumber: BigInt(i) + 2n ** 62n,
      schemaId: 1,
      level: 0,
      extraFiles: [],
      creationTime: 1_700_000_000_000 + i,
      deleteRowCount: 0,
      embeddedIndex: null,
      fileSource: 0,
      valueStatsCols: ['a', 'b', 'c'],
      externalPath: null,
      firstRowId: null,
      writeCols: null,
      writeColsSequences: null,
      ...over,
    },
  };
}

const snapshotOf = (e: ManifestEntry) =>
  JSON.parse(JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? [...v] : v)));

describe('EntryCompactor', () => {
  it('copies every field of an entry out of the decoded block, so reusing the block changes nothing', () => {
    const compactor = new EntryCompactor();
    const block = new Uint8Array(104);
    const kept: ManifestEntry[] = [];
    const expected: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      const e = decodedEntry(
        i,
        block,
        i === 4 ? { embeddedIndex: block.subarray(30, 33), extraFiles: ['x.index'], externalPath: 's3://b/x' } : {},
      );
      expected.push(snapshotOf(e));
      kept.push(compactor.entry(e));
    }
    block.fill(0xee); // a decoder reusing or freeing the block must not affect kept entries
    expect(kept.map(snapshotOf)).toEqual(expected);
    for (const e of kept) {
      for (const bytes of [e.partition, e.file.minKey, e.file.valueStats.minValues, e.file.valueStats.maxValues]) {
        expect(bytes.buffer).not.toBe(block.buffer);
      }
    }
  });

  it("shares repeated values between files and packs each file's own rows into one buffer", () => {
    const compactor = new EntryCompactor();
    const a = compactor.entry(decodedEntry(0, new Uint8Array(104)));
    const b = compactor.entry(decodedEntry(2, new Uint8Array(104)));
    expect(b.partition).toBe(a.partition);
    expect(b.file.minKey).toBe(a.file.minKey);
    expect(b.file.keyStats.maxValues).toBe(a.file.minKey);
    expect(b.file.valueStats.nullCounts).toBe(a.file.valueStats.nullCounts);
    expect(b.file.valueStatsCols).toBe(a.file.valueStatsCols);
    expect(b.file.valueStats.minValues.buffer).toBe(b.file.valueStats.maxValues.buffer);
    expect(b.file.valueStats.minValues.buffer).not.toBe(a.file.valueStats.minValues.buffer);
    expect([...b.file.valueStats.minValues]).not.toEqual([...a.file.valueStats.minValues]);
  });
});

describe('BucketFile', () => {
  it('derives the location from the bucket directory, or takes the external path', () => {
    const e = decodedEntry(1, new Uint8Array(104));
    expect(new BucketFile(e.file, 's3://bkt/wh/db.db/t/p=7/bucket-3').path).toBe('s3://bkt/wh/db.db/t/p=7/bucket-3/data-1.parquet');
    const ext = decodedEntry(1, new Uint8Array(104), { externalPath: 's3://other/data-1.parquet' });
    expect(new BucketFile(ext.file, 's3://bkt/wh/db.db/t/p=7/bucket-3').path).toBe('s3://other/data-1.parquet');
  });
});
