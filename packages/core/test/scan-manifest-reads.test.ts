/**
 * Planning reads only the manifests that may hold matching partitions (by the manifest list's
 * partition stats) and fetches them ahead of decoding, several at a time, in manifest order.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileStoreScan, FileSystemCatalog } from '../src/index.js';

function tracking(inner: FileIO, latencyMs: number): { io: FileIO; reads: string[]; maxInFlight: () => number } {
  const reads: string[] = [];
  let inFlight = 0;
  let max = 0;
  const io = new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'read') {
        return async (path: string) => {
          reads.push(path);
          inFlight++;
          max = Math.max(max, inFlight);
          try {
            await new Promise((r) => setTimeout(r, latencyMs));
            return await target.read(path);
          } finally {
            inFlight--;
          }
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { io, reads, maxInFlight: () => max };
}

describe('scan planning manifest reads', () => {
  it('skips manifests whose partition stats exclude the spec and reads the rest ahead, in order', async () => {
    const store = new MemoryFileIO();
    const root = `memory://scan-manifest-reads-${process.pid}/wh`;
    const catalog = new FileSystemCatalog(root, { fileIO: store });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'dt', type: 'STRING' },
      ],
      partitionKeys: ['dt'],
      options: { 'write-only': 'true' },
    });
    const t = await catalog.getTable('db.t');
    // One commit per partition and round: every delta manifest holds a single partition.
    for (let round = 0; round < 3; round++) {
      for (const dt of ['a', 'b', 'c', 'd']) await t.append([{ id: round * 10 + dt.charCodeAt(0), dt }]);
    }
    const snapshot = (await t.snapshotManager.latest())!;
    const { io, reads, maxInFlight } = tracking(store, 20);
    const ctx = { ...t.context, fileIO: io };
    const scan = new FileStoreScan(ctx, t.schemaManager);

    const plan = await scan.plan(snapshot, { partitionSpec: { dt: 'b' } });
    expect(plan.splits.flatMap((s) => s.files.map((f) => f.meta.rowCount))).toEqual([1, 1, 1]);
    expect(plan.splits.map((s) => s.partitionSpec)).toEqual([{ dt: 'b' }]);
    const manifestReads = reads.filter((p) => /\/manifest\/manifest-(?!list-)/.test(p));
    // Only the three manifests of partition b (one per round), not the twelve.
    expect(manifestReads).toHaveLength(3);

    reads.length = 0;
    const all = await scan.plan(snapshot);
    expect(all.splits.reduce((n, s) => n + s.files.length, 0)).toBe(12);
    expect(reads.filter((p) => /\/manifest\/manifest-(?!list-)/.test(p))).toHaveLength(12);
    // Manifests were fetched several at a time.
    expect(maxInFlight()).toBeGreaterThan(2);
  });
});
