/**
 * Rolling a table back to a snapshot or tag (Paimon's `rollback_to`): snapshots after the target
 * are removed newest first, then the long-lived changelogs after it (stream consumers past it move
 * back to it), then the files only they used
 * (data files they added that are not live in the target, their manifests and manifest lists),
 * and LATEST is updated.
 *
 * Not safe against concurrent commits (as in Paimon): stop writers while rolling back. A dry run
 * reads the same files and deletes nothing. Files another branch still reads are kept (Paimon
 * does not look at other branches; see `branch/other-branches.ts`).
 */
import type { FileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList, serializeSnapshot, type Snapshot } from '@tidemark/format';
import { ChangelogManager } from './changelog-manager.js';
import { ConsumerManager } from './consumer-manager.js';
import { SnapshotNotFoundError } from './errors.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { TablePaths } from './table-paths.js';
import { TagManager } from './tag-manager.js';
import { RollbackError } from './commit/commit-errors.js';
import { dataManifests, liveEntries } from './commit/manifest-fold.js';
import { DataFileLocator, latestSchema, tryReadIndexManifest, type MaintenanceProgress } from './expire/table-files.js';
import { OtherBranches } from './branch/other-branches.js';
import type { NamedTag } from './expire/snapshot-deletion.js';

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
  /**
   * Removed long-lived changelogs (`changelog/changelog-<id>` after the target, newest first):
   * they exist after a rollback to a tag whose snapshot expired, and describe undone commits.
   * Their changelog files are left to orphan cleanup.
   */
  readonly removedChangelogs: readonly number[];
  /**
   * Stream consumers (`consumer/consumer-<id>`) whose next snapshot lay past the target: moved back
   * to the snapshot after it, so that they read the commits made after the rollback, which reuse
   * the removed ids (Java leaves them, and they then skip those commits).
   */
  readonly movedConsumers: readonly string[];
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

/** What the steps of one rollback share. */
interface RollbackRun {
  readonly fileIO: FileIO;
  readonly paths: TablePaths;
  readonly dryRun: boolean;
  readonly snapshots: SnapshotManager;
  readonly tags: TagManager;
  readonly report: (progress: MaintenanceProgress) => void;
}

/** The files only the removed snapshots and tags use: what the rollback deletes. */
interface DoomedFiles {
  /** Data files with their extra files (paths). */
  readonly dataFiles: Set<string>;
  /** Index files (hash indexes, deletion vectors): name to path. */
  readonly indexFiles: Map<string, string>;
  /** Manifest-directory files (lists, manifests, index manifests) by name. */
  readonly manifests: Set<string>;
  /** Locates the data files of the table's latest schema. */
  readonly locator: DataFileLocator;
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
  const run: RollbackRun = {
    fileIO,
    paths,
    dryRun: options.dryRun ?? false,
    snapshots: new SnapshotManager(fileIO, paths),
    tags: new TagManager(fileIO, paths),
    report: options.onProgress ?? ((): void => undefined),
  };
  const retained = await targetSnapshot(run, target);
  const laterTags = await laterTagsUnlessForced(run, retained, options.force ?? false);
  const latestId = await run.snapshots.latestId();
  const earliestId = await run.snapshots.earliestId();
  if (latestId === null) throw new SnapshotNotFoundError(retained.id, null, null);

  // From here on readers see the target as latest.
  const removed = await removeLaterSnapshots(run, retained.id, latestId);
  const removedChangelogs = await removeLaterChangelogs(run, retained.id);
  const movedConsumers = await moveConsumersBack(run, retained.id);
  if (!run.dryRun) await pointHintsAndDropTags(run, retained.id, earliestId, laterTags);
  const scanned = [...removed, ...laterTags.map((t) => t.tag as Snapshot)];
  const doomed = await filesOnlyScannedUse(run, retained, scanned);
  await keepFilesOfOtherBranches(run, latestId, doomed);
  if (scanned.length > 0) run.report({ phase: 'manifests', done: scanned.length, total: scanned.length, bytesFreed: 0 });
  const { deletedDataFiles, deletedManifests } = run.dryRun
    ? { deletedDataFiles: doomed.dataFiles.size, deletedManifests: doomed.manifests.size }
    : await deleteDoomed(run, doomed);
  return {
    snapshotId: retained.id,
    removedSnapshots: removed.map((s) => s.id),
    removedTags: laterTags.map((t) => t.name),
    removedChangelogs,
    movedConsumers,
    deletedDataFiles,
    deletedManifests,
    dryRun: run.dryRun,
  };
}

/** The snapshot rolled back to: snapshot `target`, or tag `target`'s, restored from the tag if it expired. */
async function targetSnapshot(run: RollbackRun, target: number | string): Promise<Snapshot> {
  if (typeof target !== 'string') return run.snapshots.snapshot(target);
  const tag = await run.tags.tag(target);
  const existing = await run.snapshots.tryGet(tag.id);
  if (existing !== null) return existing;
  // The tagged snapshot expired: restore it from the tag (Java does the same).
  const { tagCreateTime: _c, tagTimeRetained: _r, ...snap } = tag;
  if (!run.dryRun) await run.fileIO.createIfAbsent(run.paths.snapshotPath(tag.id), serializeSnapshot(snap));
  return snap;
}

/** The tags pointing after `retained`, which go with the rollback; refused unless `force`. */
async function laterTagsUnlessForced(run: RollbackRun, retained: Snapshot, force: boolean): Promise<NamedTag[]> {
  const laterTags = (await run.tags.list()).filter((t) => t.tag.id > retained.id);
  if (laterTags.length > 0 && !force) {
    throw new RollbackError(
      `cannot roll back to snapshot ${retained.id}: tag(s) ${laterTags.map((t) => `'${t.name}' (snapshot ${t.tag.id})`).join(', ')} point at later snapshots; delete them, or pass --force (force: true in code), which deletes them too`,
    );
  }
  return laterTags;
}

/** Removes the snapshot files after `retainedId` newest first (dry run: only reads them); returns them. */
async function removeLaterSnapshots(run: RollbackRun, retainedId: number, latestId: number): Promise<Snapshot[]> {
  const removed: Snapshot[] = [];
  const later = latestId - retainedId;
  for (let id = latestId; id > retainedId; id--) {
    run.report({ phase: 'snapshots', done: latestId - id, total: later, bytesFreed: 0 });
    const s = await run.snapshots.tryGet(id);
    if (s === null) continue;
    removed.push(s);
    if (!run.dryRun) await run.fileIO.delete(run.paths.snapshotPath(id));
  }
  if (later > 0) run.report({ phase: 'snapshots', done: later, total: later, bytesFreed: 0 });
  return removed;
}

/**
 * Removes the long-lived changelogs after `retainedId`, newest first (dry run: only lists them),
 * as Java's rollback does: a stream reader would otherwise read the undone commits' changes
 * under ids the next commits reuse. Returns their ids.
 */
async function removeLaterChangelogs(run: RollbackRun, retainedId: number): Promise<number[]> {
  const changelogs = new ChangelogManager(run.fileIO, run.paths);
  const all: number[] = [];
  for await (const id of changelogs.listIds()) all.push(id);
  const later = all.filter((id) => id > retainedId).sort((a, b) => b - a);
  if (run.dryRun || later.length === 0) return later;
  for (const id of later) await changelogs.delete(id);
  const kept = all.filter((id) => id <= retainedId);
  try {
    if (kept.length > 0) await run.fileIO.write(run.paths.changelogLatestHint, String(Math.max(...kept)));
    else await run.fileIO.delete(run.paths.changelogLatestHint);
  } catch {
    // Hints are best effort; the changelog files are the truth.
  }
  return later;
}

/** Moves every consumer whose next snapshot is past `retainedId + 1` back to it (dry run: only lists them); returns their ids. */
async function moveConsumersBack(run: RollbackRun, retainedId: number): Promise<string[]> {
  const consumers = new ConsumerManager(run.fileIO, run.paths);
  const moved = await consumers.idsPast(retainedId + 1);
  if (!run.dryRun) for (const id of moved) await consumers.resetConsumer(id, retainedId + 1);
  return moved;
}

/** Points LATEST (and EARLIEST, when it was past the target) at `retainedId` and deletes the later tags. */
async function pointHintsAndDropTags(
  run: RollbackRun,
  retainedId: number,
  earliestId: number | null,
  laterTags: readonly NamedTag[],
): Promise<void> {
  const { fileIO, paths } = run;
  try {
    await fileIO.write(paths.latestHint, String(retainedId));
    if (earliestId !== null && earliestId > retainedId) await fileIO.write(paths.earliestHint, String(retainedId));
  } catch {
    // Hints are best effort; the snapshot files are the truth.
  }
  for (const t of laterTags) await fileIO.delete(paths.tagPath(t.name));
}

/** The data, index and manifest files the `scanned` snapshots use and `retained` does not. */
async function filesOnlyScannedUse(run: RollbackRun, retained: Snapshot, scanned: readonly Snapshot[]): Promise<DoomedFiles> {
  const { fileIO, paths } = run;
  const live = await liveEntries(fileIO, paths, retained);
  const locator = new DataFileLocator(paths, await latestSchema({ fileIO, paths }));
  const liveFiles = new Set<string>();
  for (const e of live.values()) liveFiles.add(locator.dataFile(e));
  const keep = await referencedManifestFiles(fileIO, paths, retained);
  const doomed: DoomedFiles = {
    dataFiles: new Set<string>(),
    indexFiles: await indexFilesOnlyScannedUse(run, retained, scanned),
    manifests: new Set<string>(),
    locator,
  };
  for (const [i, s] of scanned.entries()) {
    run.report({ phase: 'manifests', done: i, total: scanned.length, bytesFreed: 0 });
    let refs: Set<string>;
    try {
      refs = await referencedManifestFiles(fileIO, paths, s);
    } catch {
      continue; // already partly cleaned (e.g. a tag sharing a removed snapshot's files)
    }
    for (const r of refs) if (!keep.has(r)) doomed.manifests.add(r);
    await addDataFilesNotLive(run, s, liveFiles, doomed);
  }
  return doomed;
}

/** Index files (hash indexes, deletion vectors) written after the target and not live in it. */
async function indexFilesOnlyScannedUse(run: RollbackRun, retained: Snapshot, scanned: readonly Snapshot[]): Promise<Map<string, string>> {
  const { fileIO, paths } = run;
  const liveIndex = new Set(((await tryReadIndexManifest(fileIO, paths, retained.indexManifest)) ?? []).map((e) => e.fileName));
  const doomed = new Map<string, string>();
  for (const s of scanned) {
    for (const e of (await tryReadIndexManifest(fileIO, paths, s.indexManifest).catch(() => null)) ?? []) {
      if (!liveIndex.has(e.fileName)) doomed.set(e.fileName, e.externalPath ?? paths.indexPath(e.fileName));
    }
  }
  return doomed;
}

/** Adds the data files `s` added (with their extra files) that are not in `liveFiles` to `doomed`. */
async function addDataFilesNotLive(run: RollbackRun, s: Snapshot, liveFiles: ReadonlySet<string>, doomed: DoomedFiles): Promise<void> {
  const { fileIO, paths } = run;
  try {
    for (const m of await readManifestList(fileIO, paths.manifestPath(s.deltaManifestList))) {
      for await (const e of readManifestEntries(fileIO, paths.manifestPath(m.fileName))) {
        if (e.kind !== 'ADD') continue;
        const p = doomed.locator.dataFile(e);
        if (!liveFiles.has(p)) {
          doomed.dataFiles.add(p);
          for (const extra of doomed.locator.extraFiles(e)) doomed.dataFiles.add(extra);
        }
      }
    }
  } catch {
    // Missing delta manifests: nothing more to learn from this snapshot.
  }
}

/** Spares the files another branch still reads (a branch made from a tag here shares its files). */
async function keepFilesOfOtherBranches(run: RollbackRun, latestId: number, doomed: DoomedFiles): Promise<void> {
  const others = await OtherBranches.read(run.fileIO, run.paths, latestId);
  if (others === null) return;
  await others.keepUsed(doomed.dataFiles, doomed.locator);
  for (const name of await others.metadataNames()) {
    doomed.manifests.delete(name);
    doomed.indexFiles.delete(name);
  }
}

/** Deletes data files, then index files, then manifest-directory files; returns the data files and manifests deleted. */
async function deleteDoomed(run: RollbackRun, doomed: DoomedFiles): Promise<{ deletedDataFiles: number; deletedManifests: number }> {
  const { fileIO, paths, report } = run;
  const { dataFiles, indexFiles, manifests } = doomed;
  const toDelete = dataFiles.size + indexFiles.size + manifests.size;
  report({ phase: 'deleting', done: 0, total: toDelete, bytesFreed: 0 });
  const deletedDataFiles = await fileIO.deleteMany(dataFiles);
  report({ phase: 'deleting', done: dataFiles.size, total: toDelete, bytesFreed: 0 });
  await fileIO.deleteMany(indexFiles.values());
  report({ phase: 'deleting', done: dataFiles.size + indexFiles.size, total: toDelete, bytesFreed: 0 });
  const deletedManifests = await fileIO.deleteMany([...manifests].map((n) => paths.manifestPath(n)));
  report({ phase: 'deleting', done: toDelete, total: toDelete, bytesFreed: 0 });
  return { deletedDataFiles, deletedManifests };
}
