import { describe, expect, it } from 'vitest';
import { BATCH_COMMIT_IDENTIFIER, decodeHashIndex, readIndexManifest } from '@tidemark/format';
import {
  DynamicBucketAssigner,
  DynamicBucketLimitError,
  withHashIndexChanges,
  type DynamicBucketOptions,
} from '../src/write/dynamic-bucket-assigner.js';
import { IntToIntHashMap } from '../src/write/int-hash-map.js';
import { primaryKeyBucketMode } from '../src/write/bucket-mode.js';
import { NotSupportedError } from '../src/write/write-errors.js';
import { createTestTable, dataFile, partitionBytes, type TestTable } from './commit-helpers.js';

const A = partitionBytes('a');
const B = partitionBytes('b');

async function assigner(t: TestTable, options: DynamicBucketOptions, ignoreExisting = false): Promise<DynamicBucketAssigner> {
  const a = new DynamicBucketAssigner(t.io, t.commit.paths, await t.snapshots.latest(), options, ignoreExisting);
  await a.load(A);
  await a.load(B);
  return a;
}

/** Writes the assigner's index files and commits them with one data file per touched bucket. */
async function commitAssignment(t: TestTable, a: DynamicBucketAssigner): Promise<void> {
  const changes = await a.prepareIndexFiles();
  const messages = withHashIndexChanges(
    changes.map((c) => ({ partition: c.partition, bucket: c.bucket, totalBuckets: -1, newFiles: [dataFile(1)] })),
    changes,
    a.baseSnapshotId,
  );
  await t.commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages }, { commitUser: 'u' });
}

async function indexedHashes(t: TestTable): Promise<Map<string, number[]>> {
  const s = (await t.snapshots.latest())!;
  const out = new Map<string, number[]>();
  for (const e of await readIndexManifest(t.io, t.paths.manifestPath(s.indexManifest!))) {
    const k = `${Buffer.from(e.partition).equals(Buffer.from(A)) ? 'a' : 'b'}/${e.bucket}`;
    expect(out.has(k)).toBe(false);
    out.set(k, [...decodeHashIndex(await t.io.read(t.paths.indexPath(e.fileName)), e.fileName, e.rowCount)]);
  }
  return out;
}

describe('DynamicBucketAssigner', () => {
  it('fills buckets up to target-row-num in order, keeps known keys in their bucket, per partition', async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    const a = await assigner(t, { targetRowNum: 3 });
    const hashes = [11, 22, 33, 44, 55, 66, 77];
    expect(hashes.map((h) => a.assign(A, h) as number)).toEqual([0, 0, 0, 1, 1, 1, 2]);
    expect(hashes.map((h) => a.assign(A, h) as number)).toEqual([0, 0, 0, 1, 1, 1, 2]);
    expect(a.assign(B, 11)).toBe(0);
    await commitAssignment(t, a);
    expect(await indexedHashes(t)).toEqual(
      new Map([
        ['a/0', [11, 22, 33]],
        ['a/1', [44, 55, 66]],
        ['a/2', [77]],
        ['b/0', [11]],
      ]),
    );

    // A later write starts from the committed index: old keys stay, new ones top up bucket 2.
    const next = await assigner(t, { targetRowNum: 3 });
    expect([77, 11, 66, 88, 99, 100].map((h) => next.assign(A, h))).toEqual([2, 0, 1, 2, 2, 3]);
    await commitAssignment(t, next);
    const idx = await indexedHashes(t);
    expect(idx.get('a/2')).toEqual([77, 88, 99]);
    expect(idx.get('a/3')).toEqual([100]);
    expect(idx.get('a/0')).toEqual([11, 22, 33]); // untouched bucket keeps its file
  });

  it("initial-buckets N spreads new keys as Java's N assigners do: hash h goes to buckets b with |b % N| = |h % N|", async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    const a = await assigner(t, { targetRowNum: 2, initialBuckets: 3 });
    const hashes = [3, 4, 5, -7, 6, 9, 12];
    // |h % 3|: 0, 1, 2, 1, 0, 0, 0 -> assigner 0 owns buckets 0, 3, 6 …, assigner 1 owns 1, 4 …
    expect(hashes.map((h) => a.assign(A, h) as number)).toEqual([0, 1, 2, 1, 0, 3, 3]);
  });

  it('max-buckets caps the bucket ids; past the cap new keys join an existing bucket of their assigner', async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    const a = await assigner(t, { targetRowNum: 1, maxBuckets: 2 });
    expect([1, 2].map((h) => a.assign(A, h))).toEqual([0, 1]);
    const over = [3, 4, 5, 6].map((h) => a.assign(A, h));
    for (const b of over) expect([0, 1]).toContain(b);
    expect([3, 4, 5, 6].map((h) => a.assign(A, h))).toEqual(over);
  });

  it('runs out of bucket ids with a clear error naming target-row-num', async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    const a = await assigner(t, { targetRowNum: 1 });
    for (let h = 0; h < 32767; h++) await a.assign(A, h);
    expect(() => a.assign(A, -5)).toThrow(DynamicBucketLimitError);
    expect(() => a.assign(A, -5)).toThrow(/dynamic-bucket.target-row-num/);
  });

  it('ignoreExisting starts from an empty index (overwrite)', async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    const a = await assigner(t, { targetRowNum: 1 });
    expect([1, 2].map((h) => a.assign(A, h))).toEqual([0, 1]);
    await commitAssignment(t, a);
    const fresh = await assigner(t, { targetRowNum: 1 }, true);
    expect(fresh.assign(A, 2)).toBe(0);
  });

  it('rejects bad settings; loads partitions on first use', async () => {
    const t = await createTestTable({ options: { bucket: '-1' } });
    expect(() => new DynamicBucketAssigner(t.io, t.commit.paths, null, { targetRowNum: 0 })).toThrow(/target-row-num/);
    expect(() => new DynamicBucketAssigner(t.io, t.commit.paths, null, { targetRowNum: 5, initialBuckets: 0 })).toThrow(/initial-buckets/);
    // An unloaded partition is loaded on first use.
    const a = new DynamicBucketAssigner(t.io, t.commit.paths, null, { targetRowNum: 5 });
    expect(await a.assign(A, 1)).toBe(0);
    expect(a.assign(A, 1)).toBe(0);
  });
});

describe('IntToIntHashMap', () => {
  it('agrees with a Map over many clustered and negative keys', () => {
    const m = new IntToIntHashMap();
    const ref = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const k = (i % 3 === 0 ? -i : i * 65536) | 0;
      m.set(k, i % 32767);
      ref.set(k, i % 32767);
    }
    expect(m.size).toBe(ref.size);
    for (const [k, v] of ref) expect(m.get(k)).toBe(v);
    expect(m.get(123457)).toBe(-1);
    expect(m.has(0)).toBe(true);
  });
});

describe('primaryKeyBucketMode', () => {
  const schema = (options: Record<string, string>, primaryKeys = ['id', 'dt'], partitionKeys = ['dt']) => ({
    options,
    primaryKeys,
    partitionKeys,
  });

  it('dynamic for bucket -1 (the default), fixed for a positive count', () => {
    expect(primaryKeyBucketMode(schema({}))).toBe('HASH_DYNAMIC');
    expect(primaryKeyBucketMode(schema({ bucket: '-1' }))).toBe('HASH_DYNAMIC');
    expect(primaryKeyBucketMode(schema({ bucket: '4' }))).toBe('HASH_FIXED');
  });

  it('refuses postpone buckets, cross-partition updates and bucket-key with dynamic buckets, naming the option or keys', () => {
    expect(() => primaryKeyBucketMode(schema({ bucket: '-2' }))).toThrow(NotSupportedError);
    expect(() => primaryKeyBucketMode(schema({ bucket: '-2' }))).toThrow(/'bucket' = -2 \(postpone/);
    expect(() => primaryKeyBucketMode(schema({}, ['id'], ['dt', 'hr']))).toThrow(/partition key\(s\) dt, hr: cross-partition updates/);
    expect(() => primaryKeyBucketMode(schema({ 'bucket-key': 'id' }))).toThrow(/'bucket-key' = 'id' cannot be used with 'bucket' = -1/);
  });
});
