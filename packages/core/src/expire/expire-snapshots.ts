/**
 * Snapshot expiration with Java Paimon's semantics and defaults (paimon-format.md §8).
 *
 * Order of deletions, chosen so that a run killed at any point leaves every retained snapshot and
 * every tag readable and a rerun finishes the job:
 * 1. data files deleted by the expiring snapshots (not live in the first retained snapshot nor in
 *    the newest tag before the deleting snapshot), plus their extra files;
 * 2. changelog files of the expired snapshots;
 * 3. manifests and index files, then manifest lists and index manifests, that no retained
 *    snapshot or tag references;
 * 4. the snapshot files, oldest first (so a partial run leaves a contiguous range);
 * 5. the EARLIEST hint.
 * Expired snapshots become unreadable from step 1 on, exactly as in Java; nothing retained ever
 * does. Missing files (already deleted by an earlier, interrupted run) are skipped.
 *
 * Memory: manifests are streamed; only the DELETE entries of the expiring range (bounded by
 * `snapshot.expire.limit` commits) and the metadata file names of retained snapshots and tags are
 * held, never the data files of the whole table.
 */
import { NotFoundError, joinPath, type FileIO } from '@tidemark/storage';
import { parseJson, readManifestEntries, type ManifestFileMeta, type Snapshot, type Tag } from '@tidemark/format';
import { tableOptions } from '../core-options.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import type { TablePaths } from '../table-paths.js';
import { MaintenanceArgumentError, MaintenanceError } from './maintenance-errors.js';
import {
  DataFileLocator,
  checkAborted,
  latestSchema,
  manifestListNames,
  tryReadIndexManifest,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from './table-files.js';

/** Options of {@link expireSnapshots}; unset values come from the table options. */
export interface ExpireSnapshotsOptions extends MaintenanceRunOptions {
  /** Keep at least this many snapshots (`snapshot.num-retained.min`, default 10; at least 1). */
  readonly retainMin?: number;
  /** Keep at most this many snapshots (`snapshot.num-retained.max`, default unlimited). */
  readonly retainMax?: number;
  /**
   * Epoch millis: snapshots are expired only when their successor was committed before this
   * time. Default `now − snapshot.time-retained` (1 h).
   */
  readonly olderThanMs?: number;
  /** Expire at most this many snapshots per run (`snapshot.expire.limit`, default 50). */
  readonly expireLimit?: number;
  /** Alias of {@link expireLimit}. */
  readonly maxDeletes?: number;
}

/** Result of {@link expireSnapshots}. */
export interface ExpireSnapshotsSummary extends MaintenanceSummary {
  readonly snapshotsExpired: number;
  /** Earliest snapshot after the run (null for a table without snapshots). */
  readonly earliestSnapshotId: number | null;
}

interface Marked {
  readonly path: string;
  readonly extra: readonly string[];
  readonly size: number;
  /** Snapshot whose delta deleted the file. */
  readonly deletedIn: number;
}

/** What a run decided to expire: snapshots `[earliest, end)`. */
interface ExpireRange {
  readonly earliest: number;
  readonly end: number;
}

/**
 * Expires old snapshots of `table` and deletes the files only they used.
 *
 * @throws MaintenanceArgumentError for invalid retain counts.
 * @throws MaintenanceError when a retained snapshot's or tag's metadata cannot be read (nothing
 *   unsafe is deleted then), or when deletions fail.
 */
export async function expireSnapshots(table: MaintainedTable, options: ExpireSnapshotsOptions = {}): Promise<ExpireSnapshotsSummary> {
  const now = (options.now ?? Date.now)();
  const started = Date.now();
  const io = table.fileIO;
  const paths = table.paths;
  const schema = await latestSchema(table);
  const o = tableOptions(schema);
  const retainMin = options.retainMin ?? o.snapshotNumRetainedMin;
  const retainMax = options.retainMax ?? o.snapshotNumRetainedMax;
  const limit = options.expireLimit ?? options.maxDeletes ?? o.snapshotExpireLimit;
  const olderThan = options.olderThanMs ?? now - o.snapshotTimeRetainedMs;
  if (!Number.isInteger(retainMin) || retainMin < 1) {
    throw new MaintenanceArgumentError(`retainMin (snapshot.num-retained.min) must be an integer >= 1, got ${retainMin}`);
  }
  if (!Number.isInteger(retainMax) || retainMax < retainMin) {
    throw new MaintenanceArgumentError(`retainMax (snapshot.num-retained.max) must be an integer >= retainMin (${retainMin}), got ${retainMax}`);
  }
  if (!Number.isInteger(limit) || limit < 1) throw new MaintenanceArgumentError(`expireLimit (snapshot.expire.limit) must be an integer >= 1, got ${limit}`);
  if (!Number.isFinite(olderThan)) throw new MaintenanceArgumentError(`olderThanMs must be epoch millis, got ${olderThan}`);

  const dryRun = options.dryRun ?? false;
  const snapshots = new SnapshotManager(io, paths);
  const deletedList: string[] = [];
  let filesDeleted = 0;
  let bytesFreed = 0;
  const progress = (phase: string, done: number, total?: number): void =>
    options.onProgress?.({ phase, done, bytesFreed, ...(total !== undefined ? { total } : {}) });
  const summary = (snapshotsExpired: number, earliestSnapshotId: number | null): ExpireSnapshotsSummary => ({
    snapshotsExpired,
    earliestSnapshotId,
    filesDeleted,
    bytesFreed,
    durationMs: Date.now() - started,
    dryRun,
    ...(dryRun ? { deleted: deletedList } : {}),
  });

  /** Deletes (or, in a dry run, lists) a stream of files; sizes are added to bytesFreed. */
  const deleteAll = async (phase: string, files: Iterable<{ path: string; size: number }>): Promise<void> => {
    let done = 0;
    const paths: string[] = [];
    const flush = async (): Promise<void> => {
      if (paths.length === 0) return;
      checkAborted(options.signal);
      if (!dryRun) await io.deleteMany(paths);
      paths.length = 0;
    };
    for (const f of files) {
      paths.push(f.path);
      if (dryRun) deletedList.push(f.path);
      filesDeleted++;
      bytesFreed += f.size;
      done++;
      if (paths.length >= 1000) {
        await flush();
        progress(phase, done);
      }
    }
    await flush();
    progress(phase, done);
  };

  const latestId = await snapshots.latestId();
  const earliestId = await snapshots.earliestId();
  if (latestId === null || earliestId === null) return summary(0, null);
  const range = await computeRange(io, paths, snapshots, { earliestId, latestId, retainMin, retainMax, limit, olderThan });
  if (range === null) {
    if (!dryRun) await ensureEarliestHint(io, paths, earliestId);
    return summary(0, earliestId);
  }
  const { earliest, end } = range;
  const endSnapshot = await snapshots.tryGet(end);
  if (endSnapshot === null) {
    throw new MaintenanceError(`snapshot ${end} of ${paths.root}, the first one to retain, cannot be read; expiration stopped without deleting anything`);
  }
  const tags = await new TagManager(io, paths).list();
  const locator = new DataFileLocator(paths, schema);

  // 1. Data files deleted by snapshots (earliest, end], folded so that a DELETE followed by an ADD
  //    of the same file (level upgrade) keeps it.
  checkAborted(options.signal);
  const marked = new Map<string, Marked>();
  for (let id = earliest + 1; id <= end; id++) {
    checkAborted(options.signal);
    const s = id === end ? endSnapshot : await snapshots.tryGet(id);
    if (s === null) continue;
    const delta = await tryReadManifestList(io, paths, s.deltaManifestList);
    if (delta === null) continue; // processed by an interrupted earlier run
    for (const m of delta) {
      for await (const e of tolerantEntries(io, paths, m)) {
        const path = locator.dataFile(e);
        if (e.kind === 'DELETE') marked.set(path, { path, extra: locator.extraFiles(e), size: e.file.fileSize, deletedIn: id });
        else marked.delete(path);
      }
    }
    progress('reading-deltas', id - earliest, end - earliest);
  }
  // Never delete what the first retained snapshot still has (covers unusual histories such as
  // rollbacks), nor what a tag has: per Paimon, the newest tag before the deleting snapshot.
  if (marked.size > 0) await unmarkLive(io, paths, locator, endSnapshot, marked, `snapshot ${end}`);
  for (let i = 0; i < tags.length && marked.size > 0; i++) {
    const { name, tag } = tags[i]!;
    const nextTagId = tags[i + 1]?.tag.id ?? Number.MAX_SAFE_INTEGER;
    // The tag governs files deleted by snapshots in (tag.id, next tag's id].
    const governed = new Map<string, Marked>();
    for (const [k, v] of marked) if (v.deletedIn > tag.id && v.deletedIn <= nextTagId) governed.set(k, v);
    if (governed.size === 0) continue;
    await unmarkLive(io, paths, locator, tag, governed, `tag '${name}'`);
    for (const k of marked.keys()) if (!governed.has(k) && marked.get(k)!.deletedIn > tag.id && marked.get(k)!.deletedIn <= nextTagId) marked.delete(k);
  }
  await deleteAll(
    'data-files',
    (function* () {
      for (const m of marked.values()) {
        yield { path: m.path, size: m.size };
        for (const x of m.extra) yield { path: x, size: 0 };
      }
    })(),
  );
  marked.clear();

  // 2. Changelog files of the expired snapshots (tagged snapshots keep theirs).
  const taggedIds = new Set(tags.map((t) => t.tag.id));
  const changelogFiles: Array<{ path: string; size: number }> = [];
  for (let id = earliest; id < end; id++) {
    checkAborted(options.signal);
    if (taggedIds.has(id)) continue;
    const s = await snapshots.tryGet(id);
    if (s === null || !s.changelogManifestList) continue;
    const list = await tryReadManifestList(io, paths, s.changelogManifestList);
    if (list === null) continue;
    for (const m of list) {
      for await (const e of tolerantEntries(io, paths, m)) {
        if (e.kind !== 'ADD') continue;
        changelogFiles.push({ path: locator.dataFile(e), size: e.file.fileSize });
        for (const x of locator.extraFiles(e)) changelogFiles.push({ path: x, size: 0 });
      }
    }
    if (changelogFiles.length >= 1000) await deleteAll('changelog-files', changelogFiles.splice(0));
  }
  await deleteAll('changelog-files', changelogFiles.splice(0));

  // 3. Manifests, index files, statistics, then manifest lists and index manifests.
  checkAborted(options.signal);
  const skip = new Set<string>();
  await addMetadataNames(io, paths, endSnapshot, skip, `snapshot ${end}`);
  for (const { name, tag } of tags) await addMetadataNames(io, paths, tag, skip, `tag '${name}'`);
  const leafFiles = new Map<string, { path: string; size: number }>();
  const rootFiles = new Map<string, { path: string; size: number }>();
  const statsDir = joinPath(paths.root, 'statistics');
  for (let id = earliest; id < end; id++) {
    checkAborted(options.signal);
    const s = await snapshots.tryGet(id);
    if (s === null) continue;
    const sizes: Record<string, number | undefined> = {
      [s.baseManifestList]: s.baseManifestListSize,
      [s.deltaManifestList]: s.deltaManifestListSize,
      ...(s.changelogManifestList ? { [s.changelogManifestList]: s.changelogManifestListSize } : {}),
    };
    for (const listName of manifestListNames(s)) {
      if (skip.has(listName)) continue;
      const list = await tryReadManifestList(io, paths, listName);
      for (const m of list ?? []) {
        if (!skip.has(m.fileName)) leafFiles.set(m.fileName, { path: paths.manifestPath(m.fileName), size: m.fileSize });
      }
      if (list !== null) rootFiles.set(listName, { path: paths.manifestPath(listName), size: sizes[listName] ?? 0 });
    }
    if (s.indexManifest && !skip.has(s.indexManifest)) {
      const index = await tryReadIndexManifest(io, paths, s.indexManifest);
      for (const e of index ?? []) {
        if (e.kind === 'ADD' && !skip.has(e.fileName)) {
          leafFiles.set(e.fileName, { path: e.externalPath ?? paths.indexPath(e.fileName), size: e.fileSize });
        }
      }
      if (index !== null) rootFiles.set(s.indexManifest, { path: paths.manifestPath(s.indexManifest), size: 0 });
    }
    if (s.statistics && !skip.has(s.statistics)) leafFiles.set(s.statistics, { path: joinPath(statsDir, s.statistics), size: 0 });
  }
  await deleteAll('manifests', leafFiles.values());
  await deleteAll('manifest-lists', rootFiles.values());
  leafFiles.clear();
  rootFiles.clear();

  // 4. Snapshot files, oldest first, one at a time so an interruption leaves no gap.
  let expired = 0;
  for (let id = earliest; id < end; id++) {
    checkAborted(options.signal);
    const path = paths.snapshotPath(id);
    if (dryRun) {
      if (await io.exists(path)) {
        deletedList.push(path);
        filesDeleted++;
        expired++;
      }
    } else {
      const existed = await io.exists(path);
      await io.delete(path);
      if (existed) {
        filesDeleted++;
        expired++;
      }
    }
    progress('snapshots', id - earliest + 1, end - earliest);
  }

  // 5. EARLIEST hint.
  if (!dryRun) await io.write(paths.earliestHint, String(end));
  return summary(expired, dryRun ? earliest : end);
}

/** Paimon's choice of the expiring range `[earliest, end)`, or null when nothing expires. */
async function computeRange(
  io: FileIO,
  paths: TablePaths,
  snapshots: SnapshotManager,
  a: { earliestId: number; latestId: number; retainMin: number; retainMax: number; limit: number; olderThan: number },
): Promise<ExpireRange | null> {
  const { earliestId: earliest, latestId: latest } = a;
  // Snapshots below `min` go regardless of age (retainMax); from `min` on, only old enough ones.
  const min = Math.max(latest - a.retainMax + 1, earliest);
  let maxExclusive = Math.min(latest - a.retainMin + 1, earliest + a.limit);
  const consumerMin = await minConsumerSnapshot(io, paths);
  if (consumerMin !== null) maxExclusive = Math.min(maxExclusive, consumerMin);
  if (maxExclusive <= earliest) return null;
  let end = maxExclusive;
  for (let id = min; id < maxExclusive; id++) {
    // A snapshot may go only once its successor is older than the retention threshold, so time
    // travel to any instant inside the retention window still finds its snapshot.
    const next = await snapshots.tryGet(id + 1);
    if (next !== null && next.timeMillis >= a.olderThan) {
      end = id;
      break;
    }
  }
  return end > earliest ? { earliest, end } : null;
}

/** Smallest `nextSnapshot` of the table's consumers (`consumer/consumer-*`), or null. */
async function minConsumerSnapshot(io: FileIO, paths: TablePaths): Promise<number | null> {
  let min: number | null = null;
  for await (const st of io.list(joinPath(paths.metadataRoot, 'consumer'), { recursive: false })) {
    const name = st.path.slice(st.path.lastIndexOf('/') + 1);
    if (!name.startsWith('consumer-')) continue;
    let bytes: Uint8Array;
    try {
      bytes = await io.read(st.path);
    } catch (e) {
      if (e instanceof NotFoundError) continue;
      throw e;
    }
    let next: unknown;
    try {
      next = (parseJson(new TextDecoder().decode(bytes)) as Record<string, unknown>).nextSnapshot;
    } catch (cause) {
      throw new MaintenanceError(`consumer file ${st.path} is not valid JSON; fix or delete it before expiring snapshots`, { cause });
    }
    const n = typeof next === 'bigint' ? Number(next) : next;
    if (typeof n !== 'number' || !Number.isFinite(n)) {
      throw new MaintenanceError(`consumer file ${st.path} has no numeric 'nextSnapshot'; fix or delete it before expiring snapshots`);
    }
    if (min === null || n < min) min = n;
  }
  return min;
}

/** Entries of a manifest of an expiring snapshot; a missing manifest (deleted by an earlier run) yields nothing. */
async function* tolerantEntries(io: FileIO, paths: TablePaths, m: ManifestFileMeta): ReturnType<typeof readManifestEntries> {
  try {
    yield* readManifestEntries(io, paths.manifestPath(m.fileName));
  } catch (e) {
    if (e instanceof NotFoundError) return;
    throw e;
  }
}

/**
 * Removes from `marked` every file live in `snapshot` (a retained snapshot or a tag). Its
 * manifests must be readable: otherwise nothing can be proven safe and the run stops.
 */
async function unmarkLive(
  io: FileIO,
  paths: TablePaths,
  locator: DataFileLocator,
  snapshot: Snapshot | Tag,
  marked: Map<string, Marked>,
  what: string,
): Promise<void> {
  const net = new Map<string, number>();
  for (const listName of [snapshot.baseManifestList, snapshot.deltaManifestList]) {
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) {
      try {
        for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
          const path = locator.dataFile(e);
          if (!marked.has(path)) continue;
          net.set(path, (net.get(path) ?? 0) + (e.kind === 'ADD' ? 1 : -1));
        }
      } catch (err) {
        if (err instanceof NotFoundError) throw missing(paths, what, m.fileName);
        throw err;
      }
    }
  }
  for (const [path, n] of net) if (n > 0) marked.delete(path);
}

function missing(paths: TablePaths, what: string, name: string): MaintenanceError {
  return new MaintenanceError(
    `${what} of ${paths.root} references manifest file '${name}', which does not exist; expiration stopped before deleting data files that ${what} might need`,
  );
}

/** Adds every metadata file name a retained snapshot or tag references to `skip`. */
async function addMetadataNames(io: FileIO, paths: TablePaths, s: Snapshot | Tag, skip: Set<string>, what: string): Promise<void> {
  for (const listName of manifestListNames(s)) {
    skip.add(listName);
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) skip.add(m.fileName);
  }
  if (s.indexManifest) {
    skip.add(s.indexManifest);
    const index = await tryReadIndexManifest(io, paths, s.indexManifest);
    if (index === null) throw missing(paths, what, s.indexManifest);
    for (const e of index) skip.add(e.fileName);
  }
  if (s.statistics) skip.add(s.statistics);
}

/** Writes EARLIEST when it is missing or wrong (nothing expired, but keep the hint right). */
async function ensureEarliestHint(io: FileIO, paths: TablePaths, earliest: number): Promise<void> {
  let current: string | null = null;
  try {
    current = new TextDecoder().decode(await io.read(paths.earliestHint)).trim();
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
  }
  if (current !== String(earliest)) await io.write(paths.earliestHint, String(earliest));
}
