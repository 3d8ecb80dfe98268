/**
 * A bucket selector (the scan filter bucket pruning uses) drops entries by their bucket and the
 * bucket count they were written with, before their files are decoded: a plan with it has exactly
 * the files of an unfiltered plan in the accepted buckets, for full and incremental plans.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileStoreScan, FileSystemCatalog, type ScanPlan } from '../src/index.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

describe('bucket selector in scan planning', () => {
  it('plans exactly the files of the accepted buckets, asking with each entry’s total buckets', async () => {
    const rng = seededRandom(5);
    const catalog = new FileSystemCatalog(`memory://scan-bucket-selector-${process.pid}/wh`, { fileIO: new MemoryFileIO() });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'p', type: 'INT' },
      ],
      partitionKeys: ['p'],
      options: { 'write-only': 'true', bucket: '4', 'bucket-key': 'id' },
    });
    const t = await catalog.getTable('db.t');
    let id = 0;
    for (let commit = 0; commit < 6; commit++) {
      await t.append(Array.from({ length: 8 }, () => ({ id: id++, p: Math.floor(rng() * 2) })));
    }
    const snapshots = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => t.snapshotManager.snapshot(n)));
    const scan = new FileStoreScan(t.context, t.schemaManager);
    const files = (plan: ScanPlan, buckets?: ReadonlySet<number>): string[] =>
      plan.splits
        .filter((s) => buckets === undefined || buckets.has(s.bucket))
        .flatMap((s) => s.files.map((f) => `${s.bucket}/${f.meta.fileName}`))
        .sort();
    const all = await scan.plan(snapshots[5]!);
    const allDelta = await scan.planDelta(snapshots.slice(2));
    expect(new Set(all.splits.map((s) => s.bucket)).size).toBe(4);
    for (const accepted of [new Set([1]), new Set([0, 3]), new Set<number>()]) {
      const asked = new Set<string>();
      const bucketSelector = (bucket: number, totalBuckets: number): boolean => {
        asked.add(`${bucket}/${totalBuckets}`);
        return accepted.has(bucket);
      };
      expect(files(await scan.plan(snapshots[5]!, { bucketSelector }))).toEqual(files(all, accepted));
      expect(files(await scan.planDelta(snapshots.slice(2), { bucketSelector }))).toEqual(files(allDelta, accepted));
      expect([...asked].sort()).toEqual(['0/4', '1/4', '2/4', '3/4']);
    }
    expect(files(await scan.plan(snapshots[5]!, { bucketSelector: null }))).toEqual(files(all));
  });
});
