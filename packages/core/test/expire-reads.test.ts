/**
 * Snapshot expiration reads each metadata file of the expiring range once: the successors read
 * to choose the range serve the delta pass, and the delta lists read there serve the clean-up of
 * manifests (on an object store every read is a round trip inside a bounded window).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, expireSnapshots } from '../src/index.js';

function recordingReads(inner: FileIO): { io: FileIO; reads: string[] } {
  const reads: string[] = [];
  const io = new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'read') {
        return (path: string) => {
          reads.push(path);
          return target.read(path);
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { io, reads };
}

describe('expireSnapshots reads', () => {
  it('reads every snapshot file and manifest list of the expiring range once', async () => {
    const store = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://expire-reads-${process.pid}/wh`, { fileIO: store });
    await catalog.createTable('db.t', { fields: [{ name: 'id', type: 'INT' }], options: { 'write-only': 'true' } });
    const t = await catalog.getTable('db.t');
    for (let i = 0; i < 40; i++) await t.overwrite([{ id: i }]);
    const { io, reads } = recordingReads(store);

    const summary = await expireSnapshots({ fileIO: io, paths: t.paths }, { retainMin: 3, olderThanMs: Date.now() + 60_000 });
    expect(summary.snapshotsExpired).toBe(37);
    const metadata = reads.filter((p) => /\/snapshot\/snapshot-\d+$|\/manifest\/manifest-list-/.test(p));
    // The first retained snapshot's lists are read twice (what it keeps alive, what it names).
    const retained = await t.snapshotManager.snapshot(38);
    const kept = new Set([retained.baseManifestList, retained.deltaManifestList].map((x) => t.paths.manifestPath(x)));
    const twice = metadata.filter((p, i) => metadata.indexOf(p) !== i && !kept.has(p));
    expect(twice).toEqual([]);
    // Every expired snapshot was read (its files are found through it), and the table still reads.
    for (let id = 1; id <= 37; id++) expect(metadata).toContain(t.paths.snapshotPath(id));
    expect((await t.newRead().toArrowTable()).getChild('id')!.toArray()).toEqual(new Int32Array([39]));
  });
});
