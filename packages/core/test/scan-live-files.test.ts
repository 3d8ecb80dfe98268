/**
 * EntriesByIdentity (the fold of ADD/DELETE entries during planning) against a plain map keyed by
 * `fileEntryIdentity`: random sequences of adds and deletes where file names repeat across
 * partitions, buckets and levels, and some entries carry extra files, embedded indexes or external
 * paths.
 */
import { describe, expect, it } from 'vitest';
import { fileEntryIdentity, newDataFileMeta, type ManifestEntry } from '@tidemark/format';
import { EntriesByIdentity } from '../src/scan/live-files.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

describe('EntriesByIdentity', () => {
  it.each([
    ['the real name hash', undefined],
    ['a hash where every name collides', () => 7],
    ['a two-valued hash', (name: string) => name.length % 2],
  ])('adds, finds and deletes exactly as a map keyed by the full identity, with %s', (_label, hash) => {
    const rng = seededRandom(9);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    // Shared partition rows, as planning interns them.
    const partitions = [new Uint8Array([0, 0, 0, 1]), new Uint8Array([0, 0, 0, 2]), new Uint8Array([0, 0, 0, 3])];
    const ids = new Map<Uint8Array, number>(partitions.map((p, i) => [p, i]));
    const full = (e: ManifestEntry): string => `${ids.get(e.partition)}:${fileEntryIdentity(e)}`;
    const entry = (): ManifestEntry => {
      const odd = rng() < 0.2;
      return {
        kind: 'ADD',
        partition: pick(partitions),
        bucket: pick([0, 1]),
        totalBuckets: 2,
        file: newDataFileMeta({
          fileName: `f-${Math.floor(rng() * 6)}.parquet`,
          fileSize: 1,
          rowCount: 1,
          schemaId: 0,
          level: pick([0, 1]),
          ...(odd ? pick([{ extraFiles: ['x.index'] }, { embeddedIndex: new Uint8Array([1]) }, { externalPath: 's3://b/f' }]) : {}),
        }),
      };
    };
    const set = new EntriesByIdentity(full, hash);
    const model = new Map<string, ManifestEntry>();
    let collisions = 0;
    for (let step = 0; step < 5000; step++) {
      const e = entry();
      const key = full(e);
      expect(set.has(e)).toBe(model.has(key));
      if (rng() < 0.55) {
        const added = set.add(e);
        expect(added).toBe(!model.has(key));
        if (added) model.set(key, e);
      } else {
        expect(set.delete(e)).toBe(model.delete(key));
      }
      expect(set.size).toBe(model.size);
      if ([...model.values()].filter((m) => m.file.fileName === e.file.fileName).length > 1) collisions++;
    }
    expect(collisions).toBeGreaterThan(100);
    const keys = (xs: Iterable<ManifestEntry>): string[] => [...xs].map(full).sort();
    expect(keys(set.values())).toEqual(keys(model.values()));
    expect(set.first() === undefined).toBe(model.size === 0);
  });
});
