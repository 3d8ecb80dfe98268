/**
 * BucketFiles (the fold of ADD/DELETE entries of one partition and bucket during planning) against
 * a plain map keyed by `fileEntryIdentity`: random sequences of adds and deletes where file names
 * repeat across levels, and some files carry extra files, embedded indexes or external paths.
 */
import { describe, expect, it } from 'vitest';
import { fileEntryIdentity, newDataFileMeta, type DataFileMeta } from '@tidemark/format';
import { BucketFiles, compareFiles } from '../src/scan/live-files.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

const PARTITION = new Uint8Array([0, 0, 0, 1]);
const identity = (f: DataFileMeta): string => fileEntryIdentity({ kind: 'ADD', partition: PARTITION, bucket: 3, totalBuckets: 4, file: f });

describe('BucketFiles', () => {
  it.each([
    ['the real name hash', undefined],
    ['a hash where every name collides', () => 7],
    ['a two-valued hash', (name: string) => name.length % 2],
  ])('adds, finds and deletes exactly as a map keyed by the full identity, with %s', (_label, hash) => {
    const rng = seededRandom(9);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    const file = (): DataFileMeta => {
      const odd = rng() < 0.2;
      return newDataFileMeta({
        fileName: `f-${Math.floor(rng() * 12)}.parquet`,
        fileSize: 1,
        rowCount: 1,
        schemaId: 0,
        level: pick([0, 1]),
        minSequenceNumber: BigInt(Math.floor(rng() * 5)),
        ...(odd ? pick([{ extraFiles: ['x.index'] }, { embeddedIndex: new Uint8Array([1]) }, { externalPath: 's3://b/f' }]) : {}),
      });
    };
    const set = new BucketFiles('mem://t/p=1/bucket-3', 4, hash);
    const model = new Map<string, DataFileMeta>();
    let collisions = 0;
    for (let step = 0; step < 5000; step++) {
      const f = file();
      const key = identity(f);
      expect(set.has(f)).toBe(model.has(key));
      if (rng() < 0.55) {
        const added = set.add(f);
        expect(added).toBe(!model.has(key));
        if (added) model.set(key, f);
      } else {
        expect(set.delete(f)).toBe(model.delete(key));
      }
      expect(set.size).toBe(model.size);
      if ([...model.values()].filter((m) => m.fileName === f.fileName).length > 1) collisions++;
    }
    expect(collisions).toBeGreaterThan(100);
    const files = set.files();
    // Exactly the live files, each once, as planned files of this bucket, in split order.
    expect(files.map((p) => identity(p.meta)).sort()).toEqual([...model.keys()].sort());
    expect(files.every((p) => model.get(identity(p.meta)) === p.meta)).toBe(true);
    for (let i = 1; i < files.length; i++) expect(compareFiles(files[i - 1]!.meta, files[i]!.meta)).toBeLessThanOrEqual(0);
    for (const p of files) expect(p.path).toBe(p.meta.externalPath ?? `mem://t/p=1/bucket-3/${p.meta.fileName}`);
    expect(set.first() === undefined).toBe(model.size === 0);
  });

  it('keeps exactly the live files through table growth and many deletions (rebuilds of its hash table)', () => {
    const rng = seededRandom(21);
    const f = (i: number, level = 0): DataFileMeta =>
      newDataFileMeta({ fileName: `data-${i}.parquet`, fileSize: 1, rowCount: 1, schemaId: 0, level, minSequenceNumber: BigInt(i) });
    const set = new BucketFiles('mem://t/bucket-0', 1);
    const live = new Set<number>();
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3000; i++) if (!live.has(i) && rng() < 0.7) expect(set.add(f(i))).toBe(live.add(i) !== null);
      for (const i of [...live]) if (rng() < 0.6) expect(set.delete(f(i))).toBe(live.delete(i));
      // Same name at another level is another file; deleting it again finds nothing.
      expect(set.delete(f(0, 1))).toBe(false);
      expect(set.size).toBe(live.size);
    }
    for (const i of live) expect(set.add(f(i))).toBe(false);
    expect(set.files().map((p) => p.meta.fileName)).toEqual([...live].sort((a, b) => a - b).map((i) => `data-${i}.parquet`));
  });

  it('reports the total buckets of the first live file once rescaled entries disagree', () => {
    const f = (name: string): DataFileMeta => newDataFileMeta({ fileName: name, fileSize: 1, rowCount: 1, schemaId: 0 });
    const set = new BucketFiles('mem://t/bucket-0', 4);
    const old = f('old.parquet');
    expect(set.add(old)).toBe(true);
    expect(set.add(f('new.parquet'), 8)).toBe(true);
    expect(set.totalBuckets).toBe(4);
    expect(set.delete(old)).toBe(true);
    expect(set.totalBuckets).toBe(8);
    expect(set.files().map((p) => p.meta.fileName)).toEqual(['new.parquet']);
  });
});
