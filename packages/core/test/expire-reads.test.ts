/**
 * Snapshot expiration reads each metadata file of the expiring range once: one pass reads the
 * snapshots (choosing where the range ends), their delta entries and their manifest lists, and
 * the first retained snapshot's lists serve both what it keeps alive and what it names (on an
 * object store every read is a round trip inside a bounded window). A run that expires nothing
 * reads no further than the snapshot that stops it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { readManifestList } from '@tidemark/format';
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
    const twice = metadata.filter((p, i) => metadata.indexOf(p) !== i);
    expect(twice).toEqual([]);
    // Manifests too, but for the retained snapshot's: what it has live is read in full once more
    // (holding every ADD entry of the range to spare those reads would cost memory per file).
    const retained = await t.snapshotManager.snapshot(38);
    const live = new Set<string>();
    for (const list of [retained.baseManifestList, retained.deltaManifestList]) {
      for (const m of await readManifestList(store, t.paths.manifestPath(list))) live.add(t.paths.manifestPath(m.fileName));
    }
    const manifests = reads.filter((p) => /\/manifest\/manifest-(?!list-)/.test(p));
    expect(manifests.filter((p, i) => manifests.indexOf(p) !== i && !live.has(p))).toEqual([]);
    // Every expired snapshot was read (its files are found through it), and the table still reads.
    for (let id = 1; id <= 37; id++) expect(metadata).toContain(t.paths.snapshotPath(id));
    expect((await t.newRead().toArrowTable()).getChild('id')!.toArray()).toEqual(new Int32Array([39]));
  });

  it('a run that expires nothing reads one snapshot past the earliest and no manifest list', async () => {
    const store = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://expire-reads-young-${process.pid}/wh`, { fileIO: store });
    await catalog.createTable('db.t', { fields: [{ name: 'id', type: 'INT' }], options: { 'write-only': 'true' } });
    const t = await catalog.getTable('db.t');
    for (let i = 0; i < 40; i++) await t.append([{ id: i }]);
    const { io, reads } = recordingReads(store);

    // Every snapshot is younger than the threshold: snapshot 2 alone shows that 1 stays.
    const summary = await expireSnapshots({ fileIO: io, paths: t.paths }, { retainMin: 3, olderThanMs: Date.now() - 3_600_000 });
    expect(summary.snapshotsExpired).toBe(0);
    expect(reads.filter((p) => /\/snapshot\/snapshot-\d+$/.test(p))).toEqual([t.paths.snapshotPath(2)]);
    expect(reads.filter((p) => p.includes('/manifest/'))).toEqual([]);
  });
});
