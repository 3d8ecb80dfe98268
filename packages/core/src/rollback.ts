/**
 * Rolling a table back to a snapshot or tag (Paimon's `rollback_to`): snapshots after the target
 * are removed newest first, then the files only they used (data files they added that are not
 * live in the target, their manifests and manifest lists), and LATEST is updated.
 *
 * Not safe against concurrent commits (as in Paimon): stop writers while rolling back. A dry run
 * reads the same files and deletes nothing.
 */
import type { FileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList, serializeSnapshot, type Snapshot } from '@tidemark/format';
import { SnapshotNotFoundError } from './errors.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { TablePaths } from './table-paths.js';
import { TagManager } from './tag-manager.js';
import { RollbackError } from './commit/commit-errors.js';
import { dataManifests, liveEntries } from './commit/manifest-fold.js';
import { DataFileLocator, latestSchema, tryReadIndexManifest, type MaintenanceProgress } from './expire/table-files.js';

/** Options of {@link rollbackTo}. */
export interface RollbackOptions {
  /** Also delete tags pointing at later snapshots (otherwise the rollback is refused). */
  readonly force?: boolean;
  /**
   * Change nothing: report the snapshots and tags the rollback would remove and how many data files
   * (with their extra files) and manifest files it would delete; files already missing count too.
   */
  readonly dryRun?: boolean;
  /**
   * Called as the rollback proceeds: phase `snapshots` (later snapshots removed, against their
   * number), `manifests` (their manifests read to find the files only they used) and `deleting`
   * (files deleted, against their number; not in a dry run).
   */
  readonly onProgress?: (progress: MaintenanceProgress) => void;
}

/** What {@link rollbackTo} changed. */
export interface RollbackResult {
  readonly snapshotId: number;
  /** Removed snapshot ids, newest first. */
  readonly removedSnapshots: readonly number[];
  /** Removed tags (only with `force`). */
  readonly removedTags: readonly string[];
  readonly deletedDataFiles: number;
  readonly deletedManifests: number;
  /** True when nothing was changed ({@link RollbackOptions.dryRun}): the lists and counts say what would go. */
  readonly dryRun: boolean;
}

/** Every manifest-directory file `snapshot` references (lists, manifests, index manifest). */
async function referencedManifestFiles(fileIO: FileIO, paths: TablePaths, s: Snapshot): Promise<Set<string>> {
  const out = new Set<string>([s.baseManifestList, s.deltaManifestList]);
  if (s.changelogManifestList) out.add(s.changelogManifestList);
  if (s.indexManifest) out.add(s.indexManifest);
  for (const m of await dataManifests(fileIO, paths, s)) out.add(m.fileName);
  return out;
}

/**
 * Rolls back to snapshot `target` (a number) or to the snapshot of tag `target` (a string).
 *
 * @throws RollbackError when a tag points at a later snapshot and `force` is not set.
 * @throws SnapshotNotFoundError / TagNotFoundError when the target does not exist.
 */
export async function rollbackTo(
  fileIO: FileIO,
  paths: TablePaths,
  target: number | string,
  options: RollbackOptions = {},
): Promise<RollbackResult> {
  const dryRun = options.dryRun ?? false;
  const snapshots = new SnapshotManager(fileIO, paths);
  const tags = new TagManager(fileIO, paths);
  let retained: Snapshot;
  if (typeof target === 'string') {
    const tag = await tags.tag(target);
    const existing = await snapshots.tryGet(tag.id);
    if (existing === null) {
      // The tagged snapshot expired: restore it from the tag (Java does the same).
      const { tagCreateTime: _c, tagTimeRetained: _r, ...snap } = tag;
      if (!dryRun) await fileIO.createIfAbsent(paths.snapshotPath(tag.id), serializeSnapshot(snap));
      retained = snap;
    } else retained = existing;
  } else {
    retained = await snapshots.snapshot(target);
  }

  const laterTags = (await tags.list()).filter((t) => t.tag.id > retained.id);
  if (laterTags.length > 0 && !options.force) {
    throw new RollbackError(
      `cannot roll back to snapshot ${retained.id}: tag(s) ${laterTags.map((t) => `'${t.name}' (snapshot ${t.tag.id})`).join(', ')} point at later snapshots; delete them, or pass --force (force: true in code), which deletes them too`,
    );
  }

  const latestId = await snapshots.latestId();
  const earliestId = await snapshots.earliestId();
  if (latestId === null) throw new SnapshotNotFoundError(retained.id, null, null);

  // 1. Remove later snapshot files newest first: from here on readers see the target as latest.
  const removed: Snapshot[] = [];
  const report = options.onProgress ?? ((): void => undefined);
  const later = latestId - retained.id;
  for (let id = latestId; id > retained.id; id--) {
    report({ phase: 'snapshots', done: latestId - id, total: later, bytesFreed: 0 });
    const s = await snapshots.tryGet(id);
    if (s === null) continue;
    removed.push(s);
    if (!dryRun) await fileIO.delete(paths.snapshotPath(id));
  }
  if (later > 0) report({ phase: 'snapshots', done: later, total: later, bytesFreed: 0 });
  if (!dryRun) {
    try {
      await fileIO.write(paths.latestHint, String(retained.id));
      if (earliestId !== null && earliestId > retained.id) await fileIO.write(paths.earliestHint, String(retained.id));
    } catch {
      // Hints are best effort; the snapshot files are the truth.
    }
    for (const t of laterTags) await fileIO.delete(paths.tagPath(t.name));
  }
  const laterTagSnapshots = laterTags.map((t) => t.tag as Snapshot);

  // 2. Data files added after the target that are not live in it.
  const live = await liveEntries(fileIO, paths, retained);
  const liveFiles = new Set<string>();
  const locator = new DataFileLocator(paths, await latestSchema({ fileIO, paths }));
  for (const e of live.values()) liveFiles.add(locator.dataFile(e));
  const dataFiles = new Set<string>();
  const keep = await referencedManifestFiles(fileIO, paths, retained);
  const doomedManifests = new Set<string>();
  // Index files (hash indexes, deletion vectors) written after the target and not live in it.
  const liveIndex = new Set(((await tryReadIndexManifest(fileIO, paths, retained.indexManifest)) ?? []).map((e) => e.fileName));
  const doomedIndexFiles = new Map<string, string>();
  for (const s of [...removed, ...laterTagSnapshots]) {
    for (const e of (await tryReadIndexManifest(fileIO, paths, s.indexManifest).catch(() => null)) ?? []) {
      if (!liveIndex.has(e.fileName)) doomedIndexFiles.set(e.fileName, e.externalPath ?? paths.indexPath(e.fileName));
    }
  }
  const scanned = [...removed, ...laterTagSnapshots];
  for (const [i, s] of scanned.entries()) {
    report({ phase: 'manifests', done: i, total: scanned.length, bytesFreed: 0 });
    let refs: Set<string>;
    try {
      refs = await referencedManifestFiles(fileIO, paths, s);
    } catch {
      continue; // already partly cleaned (e.g. a tag sharing a removed snapshot's files)
    }
    for (const r of refs) if (!keep.has(r)) doomedManifests.add(r);
    try {
      for (const m of await readManifestList(fileIO, paths.manifestPath(s.deltaManifestList))) {
        for await (const e of readManifestEntries(fileIO, paths.manifestPath(m.fileName))) {
          if (e.kind !== 'ADD') continue;
          const p = locator.dataFile(e);
          if (!liveFiles.has(p)) {
            dataFiles.add(p);
            for (const extra of locator.extraFiles(e)) dataFiles.add(extra);
          }
        }
      }
    } catch {
      // Missing delta manifests: nothing more to learn from this snapshot.
    }
  }
  const result = {
    snapshotId: retained.id,
    removedSnapshots: removed.map((s) => s.id),
    removedTags: laterTags.map((t) => t.name),
  };
  if (scanned.length > 0) report({ phase: 'manifests', done: scanned.length, total: scanned.length, bytesFreed: 0 });
  if (dryRun) return { ...result, deletedDataFiles: dataFiles.size, deletedManifests: doomedManifests.size, dryRun };
  const toDelete = dataFiles.size + doomedIndexFiles.size + doomedManifests.size;
  report({ phase: 'deleting', done: 0, total: toDelete, bytesFreed: 0 });
  const deletedDataFiles = await fileIO.deleteMany(dataFiles);
  report({ phase: 'deleting', done: dataFiles.size, total: toDelete, bytesFreed: 0 });
  await fileIO.deleteMany(doomedIndexFiles.values());
  report({ phase: 'deleting', done: dataFiles.size + doomedIndexFiles.size, total: toDelete, bytesFreed: 0 });
  const deletedManifests = await fileIO.deleteMany([...doomedManifests].map((n) => paths.manifestPath(n)));
  report({ phase: 'deleting', done: toDelete, total: toDelete, bytesFreed: 0 });
  return {
    snapshotId: retained.id,
    removedSnapshots: removed.map((s) => s.id),
    removedTags: laterTags.map((t) => t.name),
    deletedDataFiles,
    deletedManifests,
    dryRun,
  };
}
